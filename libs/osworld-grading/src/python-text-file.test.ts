import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { pyReadText, pyTextLines } from './python-text-file.js';
import { PythonException } from './python-value.js';

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

  it('iterates lines with their newline, the last one possibly without', () => {
    expect(pyTextLines('a\nb')).toEqual(['a\n', 'b']);
    expect(pyTextLines('')).toEqual([]);
  });
});
