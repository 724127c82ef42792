// Python's os and os.path (posix) as the ports use them: the paths os calls accept, the OSError
// subclass a failed call raises, os.listdir, os.makedirs, os.path.join, splitext and exists.
import { mkdir, readdir, stat } from 'node:fs/promises';
import { pySorted } from './equality.js';
import { PythonException, UnsupportedPythonFeature } from './exceptions.js';
import { pyRepr, pyTypeName, type PyValue } from './values.js';

/** The errno codes whose OSError Python raises for a path: class, errno and strerror (Linux). */
const errnoClass: Readonly<Record<string, readonly [string, number, string]>> = {
  EPERM: ['PermissionError', 1, 'Operation not permitted'],
  ENOENT: ['FileNotFoundError', 2, 'No such file or directory'],
  EACCES: ['PermissionError', 13, 'Permission denied'],
  EEXIST: ['FileExistsError', 17, 'File exists'],
  ENOTDIR: ['NotADirectoryError', 20, 'Not a directory'],
  EISDIR: ['IsADirectoryError', 21, 'Is a directory'],
  ENAMETOOLONG: ['OSError', 36, 'File name too long'],
  ELOOP: ['OSError', 40, 'Too many levels of symbolic links'],
};

/**
 * A Node fs error on `path` as the OSError Python raises for it. Any other error (a full disk, too
 * many open files) is the worker host's fault, not the task's: it is returned unchanged, never scored.
 */
export function pyOsError(error: unknown, path: string): unknown {
  const code = (error as { code?: unknown } | null)?.code;
  const known = typeof code === 'string' ? errnoClass[code] : undefined;
  if (known === undefined) return error;
  const [type, errno, text] = known;
  return new PythonException(type, `[Errno ${errno}] ${text}: ${pyRepr(path)}`);
}

/** `os.fspath(value)`: a str, or the TypeError Python raises (os.path.splitext, abspath, Path()). */
export function pyFspath(value: PyValue): string {
  if (typeof value === 'string') return value;
  throw new PythonException(
    'TypeError',
    `expected str, bytes or os.PathLike object, not ${pyTypeName(value)}`,
  );
}

/** The path an os call (os.makedirs, os.listdir, Path.resolve…) takes: os.fspath, then no NUL. */
export function pyOsPath(value: PyValue): string {
  const path = pyFspath(value);
  if (path.includes('\0')) throw new PythonException('ValueError', 'embedded null byte');
  return path;
}

/** `os.path.join(first, *parts)`: an absolute part discards what came before it. */
export function pyPathJoin(first: PyValue, ...parts: readonly PyValue[]): string {
  let joined = pyFspath(first);
  for (const part of parts) {
    if (typeof part !== 'string') {
      throw new PythonException(
        'TypeError',
        `join() argument must be str, bytes, or os.PathLike object, not '${pyTypeName(part)}'`,
      );
    }
    if (part.startsWith('/')) joined = part;
    else if (joined === '' || joined.endsWith('/')) joined += part;
    else joined += `/${part}`;
  }
  return joined;
}

/** `os.path.splitext(path)`: the last dot of the last component, leading dots not counting. */
export function pySplitext(value: PyValue): [string, string] {
  const path = pyFspath(value);
  const sepIndex = path.lastIndexOf('/');
  const dotIndex = path.lastIndexOf('.');
  if (dotIndex > sepIndex) {
    for (let index = sepIndex + 1; index < dotIndex; index += 1) {
      if (path[index] !== '.') return [path.slice(0, dotIndex), path.slice(dotIndex)];
    }
  }
  return [path, ''];
}

/** `os.path.exists(path)`: false wherever stat fails (missing, a NUL, a name too long…). */
export async function pyPathExists(value: PyValue): Promise<boolean> {
  if (typeof value === 'string') {
    if (value.includes('\0')) return false;
    return (await stat(value).catch(() => undefined)) !== undefined;
  }
  if (typeof value === 'bigint' || typeof value === 'boolean' || Number.isInteger(value)) {
    throw new UnsupportedPythonFeature('os.path.exists() of a file descriptor number');
  }
  throw new PythonException(
    'TypeError',
    `stat: path should be string, bytes, os.PathLike or integer, not ${pyTypeName(value)}`,
  );
}

/** `sorted(os.listdir(path))`. */
export async function pySortedListdir(value: PyValue): Promise<string[]> {
  const path = pyOsPath(value);
  try {
    return pySorted(await readdir(path)) as string[];
  } catch (error) {
    throw pyOsError(error, path);
  }
}

/** `os.makedirs(path)`: FileExistsError when it exists. */
export async function pyMakedirs(value: PyValue): Promise<void> {
  const path = pyOsPath(value);
  if (await pyPathExists(path)) throw pyOsError({ code: 'EEXIST' }, path);
  await mkdir(path, { recursive: true }).catch((error: unknown) => {
    throw pyOsError(error, path);
  });
}
