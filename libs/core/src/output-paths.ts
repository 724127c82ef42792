import { randomBytes } from 'node:crypto';
import { mkdtemp, readdir, rename, rm, rmdir, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { UsageError } from './errors.js';

// Where a command is told to write (--out, --markdown, --output) is checked before it reads or
// writes anything, so a bad path is one line with exit code 2 instead of an errno after the work.

async function statOrUndefined(file: string) {
  return stat(file).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT' || error.code === 'ENOTDIR') return undefined;
    throw error;
  });
}

function errnoText(error: unknown): string {
  const { code, message } = error as NodeJS.ErrnoException;
  return code ?? message;
}

/** Proves a file can be created in `dir` by creating and removing an empty directory there. */
async function checkWritable(
  flag: string,
  value: string,
  dir: string,
  what: string,
): Promise<void> {
  try {
    await rmdir(await mkdtemp(path.join(dir, '.benchfleet-probe-')));
  } catch (error) {
    throw new UsageError(
      `${flag} ${value}: cannot create ${what} in ${dir} (${errnoText(error)}); give a path in a directory you may write to`,
    );
  }
}

/**
 * A file to write: its directory must exist and take new files, and the path must not be a
 * directory. An existing file is replaced (atomically, by `writeFileAtomically`).
 */
export async function checkOutputFile(flag: string, value: string): Promise<string> {
  const target = path.resolve(value);
  if ((await statOrUndefined(target))?.isDirectory())
    throw new UsageError(
      `${flag} ${value}: is a directory; give the path of a file to write, e.g. ${path.join(value, 'out.json')}`,
    );
  const dir = path.dirname(target);
  const parent = await statOrUndefined(dir);
  if (!parent)
    throw new UsageError(
      `${flag} ${value}: directory ${dir} does not exist; create it first (mkdir -p ${dir}) or give another path`,
    );
  if (!parent.isDirectory())
    throw new UsageError(`${flag} ${value}: ${dir} is not a directory; give another path`);
  await checkWritable(flag, value, dir, 'a file');
  return target;
}

/**
 * A directory to create or replace: an existing path must be a directory, and one that holds
 * anything must hold `signatureFile` (an earlier export of the same kind, which is replaced);
 * a missing one must be creatable where its first existing ancestor is.
 */
export async function checkOutputDirectory(
  flag: string,
  value: string,
  signatureFile?: string,
): Promise<string> {
  const target = path.resolve(value);
  const existing = await statOrUndefined(target);
  if (existing && !existing.isDirectory())
    throw new UsageError(
      `${flag} ${value}: is a file, not a directory; give a directory to write (a new one, or an earlier export to replace)`,
    );
  if (existing) {
    const entries = await readdir(target);
    if (entries.length > 0 && !(signatureFile && entries.includes(signatureFile)))
      throw new UsageError(
        `${flag} ${value}: the directory holds files that are not an earlier export${signatureFile ? ` (no ${signatureFile})` : ''}, and an export replaces its --out; give a new or empty directory`,
      );
  }
  let ancestor = existing ? target : path.dirname(target);
  let found = await statOrUndefined(ancestor);
  while (!found && path.dirname(ancestor) !== ancestor) {
    ancestor = path.dirname(ancestor);
    found = await statOrUndefined(ancestor);
  }
  if (!found?.isDirectory())
    throw new UsageError(`${flag} ${value}: ${ancestor} is not a directory; give another path`);
  // The export is staged beside the target, so its parent (or what will become it) must take it.
  await checkWritable(flag, value, existing ? path.dirname(target) : ancestor, 'a directory');
  return target;
}

/** Writes beside the file and renames it into place: a reader never sees half a file. */
export async function writeFileAtomically(file: string, data: string): Promise<void> {
  const staging = path.join(
    path.dirname(file),
    `.${path.basename(file)}.partial-${randomBytes(3).toString('hex')}`,
  );
  try {
    await writeFile(staging, data);
    await rename(staging, file);
  } catch (error) {
    await rm(staging, { force: true });
    throw error;
  }
}
