import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { PythonException, UnsupportedPythonFeature } from './exceptions.js';
import {
  pyMakedirs,
  pyOsError,
  pyPathExists,
  pyPathJoin,
  pySortedListdir,
  pySplitext,
} from './os.js';

const dir = await mkdtemp(join(tmpdir(), 'py-os-'));
afterAll(() => rm(dir, { recursive: true, force: true }));

// Each expectation is what python3.11 gives for the same call.
describe("Python's OSError for a failed call", () => {
  it('names the path by its repr (double quotes around a quote)', async () => {
    const missing = join(dir, "it's");
    await expect(pySortedListdir(missing)).rejects.toEqual(
      new PythonException('FileNotFoundError', `[Errno 2] No such file or directory: "${missing}"`),
    );
  });

  it('leaves an error Python would not see on a path (a full disk) to the worker, unchanged', () => {
    const hostFault = Object.assign(new Error('ENOSPC: no space left on device'), {
      code: 'ENOSPC',
    });
    expect(pyOsError(hostFault, '/x')).toBe(hostFault);
  });
});

describe('os and os.path', () => {
  it('os.listdir is sorted by code point; os.makedirs raises FileExistsError', async () => {
    for (const name of ['b', '\u{1F600}', '\uffff', 'a']) await writeFile(join(dir, name), '');
    await mkdir(join(dir, 'sub'));
    expect(await pySortedListdir(dir)).toEqual(['a', 'b', 'sub', '\uffff', '\u{1F600}']);
    await expect(pyMakedirs(join(dir, 'sub'))).rejects.toEqual(
      new PythonException('FileExistsError', `[Errno 17] File exists: '${join(dir, 'sub')}'`),
    );
    await expect(pyMakedirs('a\0b')).rejects.toEqual(
      new PythonException('ValueError', 'embedded null byte'),
    );
  });

  it('os.path.exists is False for a NUL or a missing file, and refuses what is no path', async () => {
    expect(await pyPathExists(dir)).toBe(true);
    expect(await pyPathExists(`${dir}\0`)).toBe(false);
    expect(await pyPathExists('')).toBe(false);
    await expect(pyPathExists(1.5)).rejects.toEqual(
      new PythonException(
        'TypeError',
        'stat: path should be string, bytes, os.PathLike or integer, not float',
      ),
    );
    await expect(pyPathExists(3)).rejects.toBeInstanceOf(UnsupportedPythonFeature);
  });

  it('os.path.join and splitext', async () => {
    expect(pyPathJoin('/a', 'b', '/c', 'd')).toBe('/c/d');
    expect(pyPathJoin('/a/', 'b')).toBe('/a/b');
    expect(pyPathJoin('', 'b')).toBe('b');
    expect(() => pyPathJoin('/a', 5)).toThrow(
      new PythonException(
        'TypeError',
        "join() argument must be str, bytes, or os.PathLike object, not 'int'",
      ),
    );
    expect(() => pyPathJoin(5, 'a')).toThrow(
      new PythonException('TypeError', 'expected str, bytes or os.PathLike object, not int'),
    );
    expect(pySplitext('.bashrc')).toEqual(['.bashrc', '']);
    expect(pySplitext('a/b.tar.gz')).toEqual(['a/b.tar', '.gz']);
    expect(pySplitext('a.b/c')).toEqual(['a.b/c', '']);
  });
});
