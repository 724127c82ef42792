// Behaviour of the document metrics that the golden cases do not pin: upstream quirks we keep,
// and the inputs the port refuses (a plain Error: the task is ungraded, never scored).
import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { strToU8, zipSync } from 'fflate';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { LocalPythonRunner } from '../python-runners/local-python-runner.js';
import type { MetricContext } from './metric-function.js';
import { compareArchiveMetric } from './archive-metrics.js';
import { compareEpubMetric } from './epub-metrics.js';
import { compareImageListMetric } from './image-metrics.js';
import { comparePdfsMetric } from './pdf-metrics.js';
import { checkPythonFileByTestSuiteMetric } from './python-test-suite-metrics.js';
import { diffTextFileMetric } from './text-file-metrics.js';
import { PythonException, UnsupportedPythonFeature } from '../python/exceptions.js';

let dir: string;
let context: MetricContext;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'document-metrics-'));
  context = { cacheDir: dir, python: new LocalPythonRunner() };
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const file = async (name: string, content: string | Uint8Array): Promise<string> => {
  const path = join(dir, name);
  await writeFile(path, content);
  return path;
};
const zip = (files: Record<string, string>): Uint8Array =>
  zipSync(Object.fromEntries(Object.entries(files).map(([name, text]) => [name, strToU8(text)])));

describe('compare_archive', () => {
  it('reuses a gold folder left by an earlier run, whatever the gold archive now holds', async () => {
    const pred = await file('slides.zip', zip({ 'a.txt': 'new\n' }));
    const gold = await file('gold.zip', zip({ 'a.txt': 'old\n' }));
    await mkdir(join(dir, 'gold_gold'));
    await writeFile(join(dir, 'gold_gold', 'a.txt'), 'new\n');
    const sut = await compareArchiveMetric.run([pred, gold], {}, context);
    expect(sut).toEqual({ type: 'float', value: 1.0 });
  });

  it('raises ValueError for an unknown file_type, and refuses a type whose metric is not ported', async () => {
    const pred = await file('p.zip', zip({ 'a.txt': 'x' }));
    const gold = await file('g.zip', zip({ 'a.txt': 'x' }));
    await expect(
      compareArchiveMetric.run([pred, gold], { file_type: 'weird' }, context),
    ).rejects.toEqual(new PythonException('ValueError', '[ERROR]: not support file type: weird'));
    const refusal = compareArchiveMetric.run([pred, gold], { file_type: 'docx' }, context);
    await expect(refusal).rejects.toThrow('compare_docx_files, which is not ported');
    await expect(refusal).rejects.not.toBeInstanceOf(PythonException);
  });

  it("raises Python's ValueError for file_type None or 'constructor', and join()'s TypeError for a file_path 5", async () => {
    const pred = await file('p.zip', zip({ 'a.txt': 'x' }));
    const gold = await file('g.zip', zip({ 'a.txt': 'x' }));
    await expect(
      compareArchiveMetric.run([pred, gold], { file_type: null }, context),
    ).rejects.toEqual(new PythonException('ValueError', '[ERROR]: not support file type: None'));
    await expect(
      compareArchiveMetric.run([pred, gold], { file_type: 'constructor' }, context),
    ).rejects.toEqual(
      new PythonException('ValueError', '[ERROR]: not support file type: constructor'),
    );
    await expect(compareArchiveMetric.run([pred, gold], { file_path: 5 }, context)).rejects.toEqual(
      new PythonException(
        'TypeError',
        "join() argument must be str, bytes, or os.PathLike object, not 'int'",
      ),
    );
  });

  it('refuses tar archives rather than guessing', async () => {
    const pred = await file('p.tar.gz', 'x');
    const gold = await file('g.tar.gz', 'x');
    const sut = compareArchiveMetric.run([pred, gold], {}, context);
    await expect(sut).rejects.toThrow('gztar archives are not unpacked by the port');
  });
});

describe('compare_epub', () => {
  it('raises FileNotFoundError for an .html member inside a folder, as upstream does', async () => {
    const book = zip({ 'toc.ncx': '<ncx/>\n', 'OEBPS/ch1.html': '<p>a</p>' });
    const result = await file('r.epub', book);
    const expected = await file('e.epub', book);
    const sut = compareEpubMetric.run([result, expected], {}, context);
    await expect(sut).rejects.toMatchObject({ type: 'FileNotFoundError' });
  });

  it('raises ValueError for a path with a NUL, as os.makedirs does', async () => {
    const sut = compareEpubMetric.run([join(dir, 'a\0b.epub'), join(dir, 'e.epub')], {}, context);
    await expect(sut).rejects.toEqual(new PythonException('ValueError', 'embedded null byte'));
  });
});

describe('compare_pdfs', () => {
  it('zips a dict result by its keys: the pair fails to open and scores 0, as upstream logs it', async () => {
    const sut = await comparePdfsMetric.run([{ a: 1 }, [join(dir, 'gold.pdf')]], {}, context);
    expect(sut).toEqual({ type: 'float', value: 0.0 });
  });
});

describe('compare_image_list', () => {
  it('does not reproduce Image.open of an int (Python would not take it as a path)', async () => {
    const sut = compareImageListMetric.run([5, 6], {}, context);
    await expect(sut).rejects.toBeInstanceOf(UnsupportedPythonFeature);
  });

  it('refuses an image format the port does not decode', async () => {
    const gif = await file('a.gif', 'GIF89a\x01\x00\x01\x00');
    const sut = compareImageListMetric.run([gif, gif], {}, context);
    await expect(sut).rejects.toThrow('GIF image');
    await expect(sut).rejects.not.toBeInstanceOf(PythonException);
  });
});

describe('check_python_file_by_test_suite', () => {
  it('cannot be fooled by test output that imitates the verdict line', async () => {
    const test = await file(
      'test_suite.py',
      'print("benchfleet-verdict-000000000000000000000000:" + \'{"score": 1.0}\')\ndef test():\n    return False\n',
    );
    const sut = await checkPythonFileByTestSuiteMetric.run([null, test], {}, context);
    expect(sut).toEqual({ type: 'float', value: 0.0 });
  });

  it('needs a PythonRunner in its context', async () => {
    const test = await file('test_suite.py', 'def test():\n    return True\n');
    const sut = checkPythonFileByTestSuiteMetric.run([null, test], {}, { cacheDir: dir });
    await expect(sut).rejects.toThrow('needs a PythonRunner');
  });
});

describe('Python call binding', () => {
  it('raises the TypeError CPython raises for an unexpected keyword', async () => {
    const sut = diffTextFileMetric.run(['a', 'b'], { ignore_case: true }, context);
    await expect(sut).rejects.toEqual(
      new PythonException(
        'TypeError',
        "diff_text_file() got an unexpected keyword argument 'ignore_case'",
      ),
    );
  });
});
