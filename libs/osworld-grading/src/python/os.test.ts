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

const raised = async (run: () => unknown): Promise<string | undefined> => {
  try {
    await run();
  } catch (error) {
    if (error instanceof PythonException) return `${error.type}: ${error.message}`;
    throw error;
  }
  return undefined;
};

// Each expectation is what python3.11 gives for the same call.
describe("Python's OSError for a failed call", () => {
  it('names the path by its repr (double quotes around a quote)', async () => {
    const missing = join(dir, "it's");
    expect(await raised(() => pySortedListdir(missing))).toBe(
      `FileNotFoundError: [Errno 2] No such file or directory: "${missing}"`,
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
    expect(await raised(() => pyMakedirs(join(dir, 'sub')))).toBe(
      `FileExistsError: [Errno 17] File exists: '${join(dir, 'sub')}'`,
    );
    expect(await raised(() => pyMakedirs('a\0b'))).toBe('ValueError: embedded null byte');
  });

  it('os.path.exists is False for a NUL or a missing file, and refuses what is no path', async () => {
    expect(await pyPathExists(dir)).toBe(true);
    expect(await pyPathExists(`${dir}\0`)).toBe(false);
    expect(await pyPathExists('')).toBe(false);
    expect(await raised(() => pyPathExists(1.5))).toBe(
      'TypeError: stat: path should be string, bytes, os.PathLike or integer, not float',
    );
    await expect(pyPathExists(3)).rejects.toBeInstanceOf(UnsupportedPythonFeature);
  });

  it('os.path.join and splitext', async () => {
    expect(pyPathJoin('/a', 'b', '/c', 'd')).toBe('/c/d');
    expect(pyPathJoin('/a/', 'b')).toBe('/a/b');
    expect(pyPathJoin('', 'b')).toBe('b');
    expect(await raised(() => pyPathJoin('/a', 5))).toBe(
      "TypeError: join() argument must be str, bytes, or os.PathLike object, not 'int'",
    );
    expect(await raised(() => pyPathJoin(5, 'a'))).toBe(
      'TypeError: expected str, bytes or os.PathLike object, not int',
    );
    expect(pySplitext('.bashrc')).toEqual(['.bashrc', '']);
    expect(pySplitext('a/b.tar.gz')).toEqual(['a/b.tar', '.gz']);
    expect(pySplitext('a.b/c')).toEqual(['a.b/c', '']);
  });
});
