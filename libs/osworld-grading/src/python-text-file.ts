// Python's `open(path).read()` in text mode as the metrics use it: the path checks of open(),
// strict UTF-8 (a BOM is kept as U+FEFF) and universal newlines (\r\n and \r read as \n).
import { readFile } from 'node:fs/promises';
import { pyRepr, pyTypeName, type PyValue } from './python-data.js';
import { UnsupportedPythonFeature } from './python-exceptions.js';
import { PythonException } from './python-value.js';

const errnoClass: Readonly<Record<string, [string, number, string]>> = {
  ENOENT: ['FileNotFoundError', 2, 'No such file or directory'],
  EISDIR: ['IsADirectoryError', 21, 'Is a directory'],
  ENOTDIR: ['NotADirectoryError', 20, 'Not a directory'],
  EACCES: ['PermissionError', 13, 'Permission denied'],
  EPERM: ['PermissionError', 1, 'Operation not permitted'],
};

/** The path Python's `open()`/`os.fspath()` accepts, or the TypeError it raises. */
export function pyPathArgument(path: PyValue): string {
  if (typeof path === 'string') {
    if (path.includes('\0')) throw new PythonException('ValueError', 'embedded null byte');
    return path;
  }
  if (typeof path === 'number' || typeof path === 'boolean' || typeof path === 'bigint') {
    throw new UnsupportedPythonFeature('open() of a file descriptor number');
  }
  throw new PythonException(
    'TypeError',
    `expected str, bytes or os.PathLike object, not ${pyTypeName(path)}`,
  );
}

/** An fs error as the OSError subclass Python raises for it. */
export function pyOsError(error: unknown, path: string): unknown {
  const code = (error as { code?: unknown } | null)?.code;
  const known = typeof code === 'string' ? errnoClass[code] : undefined;
  if (known === undefined) return error;
  const [type, errno, text] = known;
  return new PythonException(type, `[Errno ${errno}] ${text}: ${pyRepr(path)}`);
}

/** The bytes of `open(path, 'rb')`. */
export async function pyReadBytes(path: PyValue): Promise<Buffer> {
  const checked = pyPathArgument(path);
  try {
    return await readFile(checked);
  } catch (error) {
    throw pyOsError(error, checked);
  }
}

/** Python's strict UTF-8 decoding (a BOM stays in the text, as with encoding='utf-8'). */
export function pyDecodeUtf8(bytes: Uint8Array): string {
  try {
    return new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(bytes);
  } catch {
    throw new PythonException('UnicodeDecodeError', `'utf-8' codec can't decode the file`);
  }
}

/** Universal newlines: what Python's text mode makes of \r\n and \r. */
export const pyUniversalNewlines = (text: string): string => text.replace(/\r\n?/g, '\n');

/** `open(path).read()` (also `open(path, encoding='utf-8')`: the environment's locale is UTF-8). */
export async function pyReadText(path: PyValue): Promise<string> {
  return pyUniversalNewlines(pyDecodeUtf8(await pyReadBytes(path)));
}

/** `for line in open(path)`: lines with their '\n', the last one possibly without. */
export function pyTextLines(text: string): string[] {
  const lines = text.split(/(?<=\n)/);
  return lines.length === 1 && lines[0] === '' ? [] : lines;
}
