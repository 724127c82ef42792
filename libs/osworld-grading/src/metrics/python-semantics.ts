// What the document metrics need of Python itself: argument binding, truthiness, str methods,
// `open()` in text mode and the OSError subclasses it raises, each as CPython 3.11 behaves.
import { readFile } from 'node:fs/promises';
import { PythonException } from '../python-value.js';

/** Python's name for the type of a JSON-decoded value, as error messages print it. */
export function pythonTypeName(value: unknown): string {
  if (value === null || value === undefined) return 'NoneType';
  if (typeof value === 'boolean') return 'bool';
  if (typeof value === 'number') return Number.isInteger(value) ? 'int' : 'float';
  if (typeof value === 'string') return 'str';
  if (Array.isArray(value)) return 'list';
  return 'dict';
}

/** Python truthiness of a JSON-decoded value (`not x`). */
export function pythonTruthy(value: unknown): boolean {
  if (value === null || value === undefined || value === false || value === 0 || value === '') {
    return false;
  }
  if (Array.isArray(value)) return value.length > 0;
  if (typeof value === 'object') return Object.keys(value).length > 0;
  return true;
}

/** Python `repr()` of a str (quotes chosen and characters escaped as CPython does). */
export function pythonStrRepr(text: string): string {
  const quote = text.includes("'") && !text.includes('"') ? '"' : "'";
  let out = quote;
  for (const ch of text) {
    const code = ch.codePointAt(0) ?? 0;
    if (ch === quote || ch === '\\') out += `\\${ch}`;
    else if (ch === '\n') out += '\\n';
    else if (ch === '\r') out += '\\r';
    else if (ch === '\t') out += '\\t';
    else if (code < 0x20 || code === 0x7f) out += `\\x${code.toString(16).padStart(2, '0')}`;
    else out += ch;
  }
  return out + quote;
}

/**
 * Binds a call `name(*args, **options)` to a Python signature: positional parameters, then (when
 * `varKeywords`) a `**kwargs` catch-all. Raises the TypeError CPython raises for a bad call.
 */
export function bindPythonCall(
  name: string,
  args: readonly unknown[],
  options: Readonly<Record<string, unknown>>,
  parameters: readonly string[],
  varKeywords: boolean,
): { positional: unknown[]; kwargs: Record<string, unknown> } {
  if (args.length > parameters.length) {
    throw new PythonException(
      'TypeError',
      `${name}() takes ${parameters.length} positional arguments but ${args.length} were given`,
    );
  }
  const positional: unknown[] = [...args];
  const kwargs: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(options)) {
    const index = parameters.indexOf(key);
    if (index >= 0) {
      if (index < args.length) {
        throw new PythonException(
          'TypeError',
          `${name}() got multiple values for argument '${key}'`,
        );
      }
      positional[index] = value;
    } else if (varKeywords) {
      kwargs[key] = value;
    } else {
      throw new PythonException(
        'TypeError',
        `${name}() got an unexpected keyword argument '${key}'`,
      );
    }
  }
  const missing = parameters.filter((_, index) => !(index in positional));
  if (missing.length > 0) {
    const quoted = missing.map((parameter) => `'${parameter}'`);
    const list =
      quoted.length === 1
        ? quoted[0]
        : `${quoted.slice(0, -1).join(', ')} and ${quoted[quoted.length - 1]}`;
    throw new PythonException(
      'TypeError',
      `${name}() missing ${missing.length} required positional argument${missing.length === 1 ? '' : 's'}: ${list}`,
    );
  }
  return { positional, kwargs };
}

/** The items Python's `for x in value` yields: a list's members, a str's characters. */
export function pythonIterate(value: unknown): unknown[] {
  if (Array.isArray(value)) return value;
  if (typeof value === 'string') return Array.from(value);
  throw new PythonException('TypeError', `'${pythonTypeName(value)}' object is not iterable`);
}

/** `zip(a, b)` of two Python iterables: stops at the shorter. */
export function pythonZip(a: unknown, b: unknown): Array<[unknown, unknown]> {
  const left = pythonIterate(a);
  const right = pythonIterate(b);
  const length = Math.min(left.length, right.length);
  return Array.from({ length }, (_, index) => [left[index], right[index]]);
}

/** Python `len()` of a str (code points) or list. */
export function pythonLen(value: unknown): number {
  if (typeof value === 'string') return Array.from(value).length;
  if (Array.isArray(value)) return value.length;
  throw new PythonException('TypeError', `object of type '${pythonTypeName(value)}' has no len()`);
}

// str.isspace() and the `\s` of a str pattern: the same set in CPython.
const PY_WHITESPACE =
  '\\t\\n\\x0b\\x0c\\r\\x1c-\\x1f \\x85\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000';
export const pythonWhitespaceRun = new RegExp(`[${PY_WHITESPACE}]+`, 'gu');
const LEADING_WHITESPACE = new RegExp(`^[${PY_WHITESPACE}]+`, 'u');
const TRAILING_WHITESPACE = new RegExp(`[${PY_WHITESPACE}]+$`, 'u');

/** `str.strip()` with no argument. */
export function pythonStrip(text: string): string {
  return text.replace(LEADING_WHITESPACE, '').replace(TRAILING_WHITESPACE, '');
}

// str.splitlines() boundaries: \n, \r, \r\n, \v, \f, \x1c, \x1d, \x1e, \x85, \u2028, \u2029.
const LINE_BOUNDARY = /\r\n|[\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029]/u;

/** `str.splitlines()`: no trailing empty line for a final line break. */
export function pythonSplitlines(text: string): string[] {
  if (text === '') return [];
  const lines = text.split(LINE_BOUNDARY);
  if (lines[lines.length - 1] === '') lines.pop();
  return lines;
}

/** Python's `sorted()` of str: by code point, not by UTF-16 unit as `Array.sort` does. */
export function pythonSortedStrings(values: readonly string[]): string[] {
  const compare = (x: string, y: string): number => {
    const a = Array.from(x, (ch) => ch.codePointAt(0) ?? 0);
    const b = Array.from(y, (ch) => ch.codePointAt(0) ?? 0);
    for (let i = 0; i < Math.min(a.length, b.length); i += 1) {
      const d = (a[i] ?? 0) - (b[i] ?? 0);
      if (d !== 0) return d;
    }
    return a.length - b.length;
  };
  return [...values].sort(compare);
}

/** The OSError subclass (class name, errno, strerror) CPython raises for a Node fs error code. */
const OS_ERRORS: Record<string, [string, number, string]> = {
  ENOENT: ['FileNotFoundError', 2, 'No such file or directory'],
  EISDIR: ['IsADirectoryError', 21, 'Is a directory'],
  ENOTDIR: ['NotADirectoryError', 20, 'Not a directory'],
  EACCES: ['PermissionError', 13, 'Permission denied'],
  EPERM: ['PermissionError', 1, 'Operation not permitted'],
  EEXIST: ['FileExistsError', 17, 'File exists'],
};

/** Turns a Node fs error on `path` into the exception Python's `open()`/`os` call raises. */
export function pythonOsError(error: unknown, path: string): PythonException {
  const code = (error as NodeJS.ErrnoException | undefined)?.code ?? '';
  const [type, errno, message] = OS_ERRORS[code] ?? [
    'OSError',
    (error as NodeJS.ErrnoException | undefined)?.errno ?? 0,
    String((error as Error | undefined)?.message ?? error),
  ];
  return new PythonException(type, `[Errno ${errno}] ${message}: ${pythonStrRepr(path)}`);
}

/** Checks that `value` can be passed to `open()`; Python raises TypeError otherwise. */
export function pythonPath(value: unknown): string {
  if (typeof value === 'string') {
    if (value.includes('\0')) throw new PythonException('ValueError', 'embedded null byte');
    return value;
  }
  throw new PythonException(
    'TypeError',
    `expected str, bytes or os.PathLike object, not ${pythonTypeName(value)}`,
  );
}

/** `open(path, 'rb').read()`. */
export async function pythonReadBytes(path: unknown): Promise<Buffer> {
  const checked = pythonPath(path);
  try {
    if (checked === '') throw Object.assign(new Error('empty path'), { code: 'ENOENT' });
    return await readFile(checked);
  } catch (error) {
    throw pythonOsError(error, checked);
  }
}

/** `bytes.decode()` (UTF-8, strict; a BOM stays a character, as with Python's 'utf-8' codec). */
export function pythonDecodeUtf8(bytes: Uint8Array): string {
  try {
    return new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(bytes);
  } catch {
    throw new PythonException('UnicodeDecodeError', "'utf-8' codec can't decode bytes");
  }
}

/** `open(path).read()` on the harness: UTF-8 locale, universal newlines (`\r\n` and `\r` read as `\n`). */
export async function pythonReadText(path: unknown): Promise<string> {
  const text = pythonDecodeUtf8(await pythonReadBytes(path));
  return text.replace(/\r\n?/g, '\n');
}
