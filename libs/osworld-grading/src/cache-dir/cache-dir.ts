// The per-attempt cache dir the getters and setup captures write into: its paths, the `<CACHE>`
// marker that makes a recorded path portable, and its files.
import { readdir } from 'node:fs/promises';
import { join, relative, resolve, sep } from 'node:path';
import { pyPathJoin } from '../python/os.js';
import { toPy } from '../python/values.js';

/**
 * Python's `os.path.join(cache_dir, name)` for a name from a task file (a capture, a `dest`). Names
 * that would leave the cache dir (absolute, `..`) are refused instead of written elsewhere.
 */
export function cacheDirPath(cacheDir: string, name: unknown): string {
  const path = resolve(pyPathJoin(cacheDir, toPy(name)));
  if (!path.startsWith(resolve(cacheDir) + sep))
    throw new Error(`'${name}' would leave the cache dir`);
  return path;
}

/** Absolute cache paths in a getter's return shown as `<CACHE>/name`, as the fixtures write them. */
export function withCacheMarker(value: unknown, cacheDir: string): unknown {
  if (typeof value === 'string')
    return value.startsWith(`${cacheDir}/`) ? `<CACHE>/${value.slice(cacheDir.length + 1)}` : value;
  if (Array.isArray(value)) return value.map((entry) => withCacheMarker(entry, cacheDir));
  if (typeof value === 'object' && value !== null)
    return Object.fromEntries(
      Object.entries(value).map(([key, entry]) => [key, withCacheMarker(entry, cacheDir)]),
    );
  return value;
}

/** The inverse of withCacheMarker, for a (re)grade in another cache dir. */
export function fromCacheMarker(value: unknown, cacheDir: string): unknown {
  if (typeof value === 'string')
    return value.startsWith('<CACHE>/') ? join(cacheDir, value.slice('<CACHE>/'.length)) : value;
  if (Array.isArray(value)) return value.map((entry) => fromCacheMarker(entry, cacheDir));
  if (typeof value === 'object' && value !== null)
    return Object.fromEntries(
      Object.entries(value).map(([key, entry]) => [key, fromCacheMarker(entry, cacheDir)]),
    );
  return value;
}

/** The regular files under `dir` (a cache dir, a folder in it), relative to it, sorted. */
export async function listFilesUnder(dir: string): Promise<string[]> {
  const files: string[] = [];
  const walk = async (current: string): Promise<void> => {
    for (const entry of await readdir(current, { withFileTypes: true })) {
      const path = join(current, entry.name);
      if (entry.isDirectory()) await walk(path);
      else if (entry.isFile()) files.push(relative(dir, path));
    }
  };
  await walk(dir);
  return files.sort();
}
