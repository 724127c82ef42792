import { mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { PythonException, UnsupportedPythonFeature } from './exceptions.js';
import { pyDecodeUtf8, pyReadText, pyTextLines } from './text-files.js';

const dir = await mkdtemp(join(tmpdir(), 'py-text-file-'));
afterAll(() => rm(dir, { recursive: true, force: true }));

const errorType = async (path: unknown): Promise<string | undefined> => {
  try {
    await pyReadText(path as string);
  } catch (error) {
    if (error instanceof PythonException) return error.type;
    throw error;
  }
  return undefined;
};

describe("Python's open(path).read() in text mode", () => {
  it('reads \\r\\n and \\r as \\n and keeps a BOM', async () => {
    const path = join(dir, 'a.txt');
    await writeFile(path, Buffer.from('\ufeffa\r\nb\rc\n', 'utf8'));
    expect(await pyReadText(path)).toBe('\ufeffa\nb\nc\n');
  });

  it('raises the OSError subclass, TypeError or UnicodeDecodeError Python raises', async () => {
    const bad = join(dir, 'bad.txt');
    await writeFile(bad, Buffer.from([0x61, 0xff]));
    expect(await errorType(join(dir, 'missing.txt'))).toBe('FileNotFoundError');
    expect(await errorType(dir)).toBe('IsADirectoryError');
    expect(await errorType(null)).toBe('TypeError');
    expect(await errorType(bad)).toBe('UnicodeDecodeError');
  });

  it('raises OSError for a symlink loop and TypeError for a float, as open() does', async () => {
    const loop = join(dir, 'loop');
    await symlink(loop, loop);
    await expect(pyReadText(loop)).rejects.toEqual(
      new PythonException('OSError', `[Errno 40] Too many levels of symbolic links: '${loop}'`),
    );
    await expect(pyReadText(1.5)).rejects.toEqual(
      new PythonException('TypeError', 'expected str, bytes or os.PathLike object, not float'),
    );
    // An int is a file descriptor to open(): not reproduced, so never misread.
    await expect(pyReadText(3)).rejects.toBeInstanceOf(UnsupportedPythonFeature);
  });

  it("says where UTF-8 decoding failed, in CPython's words", () => {
    const message = (bytes: number[]): string | undefined => {
      try {
        pyDecodeUtf8(new Uint8Array(bytes));
      } catch (error) {
        return (error as PythonException).message;
      }
      return undefined;
    };
    expect(message([0xff])).toBe(
      "'utf-8' codec can't decode byte 0xff in position 0: invalid start byte",
    );
    expect(message([0x61, 0x62, 0x63, 0xe2, 0x82])).toBe(
      "'utf-8' codec can't decode bytes in position 3-4: unexpected end of data",
    );
    expect(message([0xf0, 0x9f, 0x28])).toBe(
      "'utf-8' codec can't decode bytes in position 0-1: invalid continuation byte",
    );
    // A surrogate and an overlong form are invalid at their second byte.
    expect(message([0x6f, 0x6b, 0xed, 0xa0, 0x80])).toBe(
      "'utf-8' codec can't decode byte 0xed in position 2: invalid continuation byte",
    );
    expect(message([0xe0, 0x80, 0x80])).toBe(
      "'utf-8' codec can't decode byte 0xe0 in position 0: invalid continuation byte",
    );
    expect(message([0xef, 0xbb, 0xbf, 0x61])).toBeUndefined();
  });

  it('iterates lines with their newline, the last one possibly without', () => {
    expect(pyTextLines('a\nb')).toEqual(['a\n', 'b']);
    expect(pyTextLines('')).toEqual([]);
  });
});
