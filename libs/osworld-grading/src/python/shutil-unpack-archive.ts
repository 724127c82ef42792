// CPython 3.11's `shutil.unpack_archive` for ZIP files (format chosen by the file name, as shutil
// does), as compare_archive uses it.
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { unzipSync } from 'fflate';
import { PythonException } from './exceptions.js';
import { pyOsError, pyOsPath, pyPathJoin } from './os.js';
import type { PyValue } from './values.js';

/** `shutil.ReadError`'s class name, as the fixtures record it. */
const readError = (message: string): PythonException => new PythonException('ReadError', message);

// shutil's registered unpack formats, in its registration order.
const UNPACK_FORMATS: ReadonlyArray<[string, readonly string[]]> = [
  ['tar', ['.tar']],
  ['zip', ['.zip']],
  ['gztar', ['.tar.gz', '.tgz']],
  ['bztar', ['.tar.bz2', '.tbz2']],
  ['xztar', ['.tar.xz', '.txz']],
];

const END_OF_CENTRAL_DIRECTORY = [0x50, 0x4b, 0x05, 0x06];

/**
 * `os.path.dirname(path)`: everything before the last '/', trailing slashes of the head dropped.
 * Unlike Node's `dirname`, `a/b/` gives `a/b`: that is how shutil makes a ZIP's empty directories.
 */
function pyDirname(path: string): string {
  const head = path.slice(0, path.lastIndexOf('/') + 1);
  return /^\/+$/.test(head) ? head : head.replace(/\/+$/, '');
}

/** `zipfile.is_zipfile`: an end-of-central-directory record within the last 64 KiB + 22 bytes. */
function hasEndOfCentralDirectory(bytes: Uint8Array): boolean {
  const lowest = Math.max(0, bytes.length - 22 - 0xffff);
  for (let index = bytes.length - 22; index >= lowest; index -= 1) {
    if (END_OF_CENTRAL_DIRECTORY.every((byte, offset) => bytes[index + offset] === byte)) {
      return true;
    }
  }
  return false;
}

async function unpackZip(filename: string, extractDir: string): Promise<void> {
  const bytes = await readFile(filename).catch(() => undefined);
  if (bytes === undefined || !hasEndOfCentralDirectory(bytes)) {
    throw readError(`${filename} is not a zip file`);
  }
  let entries: Record<string, Uint8Array>;
  try {
    entries = unzipSync(new Uint8Array(bytes));
  } catch (error) {
    throw new PythonException('BadZipFile', String((error as Error).message ?? error));
  }
  for (const [name, data] of Object.entries(entries)) {
    // shutil skips absolute names and any name containing '..'.
    if (name.startsWith('/') || name.includes('..')) continue;
    const target = pyPathJoin(extractDir, ...name.split('/'));
    // shutil's _ensure_directory: the dirname of `dir/` is `dir`, so an empty directory is made.
    const parent = pyDirname(target);
    await mkdir(parent, { recursive: true }).catch((error: unknown) => {
      throw pyOsError(error, parent);
    });
    if (name.endsWith('/')) continue;
    await writeFile(target, data).catch((error: unknown) => {
      throw pyOsError(error, target);
    });
  }
}

/**
 * `shutil.unpack_archive(filename, extract_dir)` for the formats the OSWorld tasks ship (ZIP).
 * Tar formats are recognised but not unpacked by this port: that raises a plain Error (the task is
 * then ungraded), not a Python exception.
 */
export async function pyUnpackArchive(filename: PyValue, extractDir: string): Promise<void> {
  const path = pyOsPath(filename);
  const format = UNPACK_FORMATS.find(([, extensions]) =>
    extensions.some((extension) => path.endsWith(extension)),
  )?.[0];
  if (format === undefined) throw readError(`Unknown archive format '${path}'`);
  if (format !== 'zip') {
    throw new Error(`compare_archive: ${format} archives are not unpacked by the port (${path})`);
  }
  await unpackZip(path, extractDir);
}
