// compare_archive on archive pairs that differ by an empty directory: golden-style cases whose
// expected results come from upstream's algorithm (shutil's unzip makes a directory for every
// `name/` entry, and os.listdir lists it). Each was confirmed by running upstream's own
// compare_archive (chrome.py at f6cee71, CPython 3.11.7's shutil) on the same pairs.
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { strToU8, zipSync } from 'fflate';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { PythonException } from '../python/exceptions.js';
import { pyUnpackArchive } from '../python/shutil-unpack-archive.js';
import { pyFloat } from '../python/values.js';
import { compareArchiveMetric } from './archive-metrics.js';
import type { MetricContext } from './metric-function.js';

let dir: string;
let context: MetricContext;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'archive-metrics-'));
  context = { cacheDir: dir };
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** A ZIP whose entries are files, or directories when the name ends with `/` (as zipfile writes them). */
async function archive(name: string, entries: Record<string, string>): Promise<string> {
  const path = join(dir, name);
  await writeFile(
    path,
    zipSync(
      Object.fromEntries(Object.entries(entries).map(([entry, text]) => [entry, strToU8(text)])),
    ),
  );
  return path;
}

const compare = async (
  pred: Record<string, string>,
  gold: Record<string, string>,
  options: Record<string, unknown> = {},
) =>
  compareArchiveMetric.run(
    [await archive('p.zip', pred), await archive('g.zip', gold)],
    options,
    context,
  );

describe('shutil.unpack_archive of a ZIP', () => {
  it('makes a directory for an empty directory entry, as shutil does', async () => {
    const zip = await archive('a.zip', { 'a.txt': 'x\n', 'extra/': '', 'deep/er/': '' });
    await pyUnpackArchive(zip, join(dir, 'out'));
    expect((await readdir(join(dir, 'out'))).sort()).toEqual(['a.txt', 'deep', 'extra']);
    expect(await readdir(join(dir, 'out', 'extra'))).toEqual([]);
    expect(await readdir(join(dir, 'out', 'deep'))).toEqual(['er']);
  });
});

describe('compare_archive and an empty directory', () => {
  it('an empty directory only in the prediction: the listings differ, 0.0', async () => {
    const sut = await compare(
      { 'a.txt': 'x\n', 'b.txt': 'y\n', 'extra/': '' },
      {
        'a.txt': 'x\n',
        'b.txt': 'y\n',
      },
    );
    expect(sut).toEqual(pyFloat(0.0));
  });

  it('an empty directory only in the gold archive: 0.0', async () => {
    const sut = await compare(
      { 'a.txt': 'x\n', 'b.txt': 'y\n' },
      {
        'a.txt': 'x\n',
        'b.txt': 'y\n',
        'extra/': '',
      },
    );
    expect(sut).toEqual(pyFloat(0.0));
  });

  it('the same empty directory in both: compare_text_file opens it and raises IsADirectoryError', async () => {
    const sut = compare({ 'a.txt': 'x\n', 'extra/': '' }, { 'a.txt': 'x\n', 'extra/': '' });
    await expect(sut).rejects.toEqual(
      new PythonException('IsADirectoryError', `[Errno 21] Is a directory: '${dir}/p_pred/extra'`),
    );
  });

  it('an empty directory under file_path counts; one outside it does not', async () => {
    const options = { file_path: 'docs' };
    await expect(
      compare({ 'docs/a.txt': 'x\n', 'docs/empty/': '' }, { 'docs/a.txt': 'x\n' }, options),
    ).resolves.toEqual(pyFloat(0.0));
    await rm(join(dir, 'g_gold'), { recursive: true });
    await expect(
      compare({ 'docs/a.txt': 'x\n', 'other/empty/': '' }, { 'docs/a.txt': 'x\n' }, options),
    ).resolves.toEqual(pyFloat(1.0));
  });

  it('file_path an empty directory in both archives: nothing to compare, ZeroDivisionError', async () => {
    const sut = compare({ 'docs/': '' }, { 'docs/': '' }, { file_path: 'docs' });
    await expect(sut).rejects.toEqual(new PythonException('ZeroDivisionError', 'division by zero'));
  });
});
