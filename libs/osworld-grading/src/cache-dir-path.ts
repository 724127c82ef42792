import { resolve, sep } from 'node:path';
import { pythonTypeName } from './python-semantics.js';

/**
 * Python's `os.path.join(cache_dir, name)` for a name from a task file (a capture, a `dest`). Names
 * that would leave the cache dir (absolute, `..`) are refused instead of written elsewhere.
 */
export function cacheDirPath(cacheDir: string, name: unknown): string {
  if (typeof name !== 'string')
    throw new TypeError(`expected str, bytes or os.PathLike object, not ${pythonTypeName(name)}`);
  const path = resolve(cacheDir, name);
  if (!path.startsWith(resolve(cacheDir) + sep))
    throw new Error(`'${name}' would leave the cache dir`);
  return path;
}
