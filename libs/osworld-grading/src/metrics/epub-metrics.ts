// `compare_epub(result, expected)` and its `process_epub` (metrics/others.py).
import { mkdir, open } from 'node:fs/promises';
import { unzipSync } from 'fflate';
import { lxmlPrettyHtml } from '../python-libraries/lxml-html.js';
import { pySplitlines } from '../python/builtins.js';
import { pySorted } from '../python/equality.js';
import { PythonException } from '../python/exceptions.js';
import { pyOsError, pyOsPath, pyPathJoin } from '../python/os.js';
import { pyDecodeUtf8, pyReadBytes } from '../python/text-files.js';
import { pyFloat, pyTypeName, type PythonValue, type PyValue } from '../python/values.js';
import { portedMetric } from './metric-function.js';
import { diffTextFile } from './text-file-metrics.js';

/** The members of a ZIP in central-directory order, as `ZipFile.namelist()` lists them. */
function readZip(
  bytes: Uint8Array,
): { names: string[]; entries: Record<string, Uint8Array> } | undefined {
  const names: string[] = [];
  try {
    const entries = unzipSync(bytes, {
      filter: (file) => {
        names.push(file.name);
        return true;
      },
    });
    return { names, entries };
  } catch {
    return undefined;
  }
}

/** `with open(path, "w") as out: out.write(produce())`: the file is created before its text is made. */
async function writeText(path: string, produce: () => string): Promise<void> {
  const handle = await open(path, 'w').catch((error: unknown) => {
    throw pyOsError(error, path);
  });
  try {
    await handle.writeFile(produce(), 'utf8');
  } finally {
    await handle.close();
  }
}

/**
 * `process_epub(filename)`: writes the normalised members into `<filename>.dir` and returns their
 * paths, sorted. A file that is not a ZIP gives []; a missing file raises FileNotFoundError.
 */
async function processEpub(filename: PyValue): Promise<string[]> {
  if (typeof filename !== 'string') {
    throw new PythonException(
      'TypeError',
      `unsupported operand type(s) for +: '${pyTypeName(filename)}' and 'str'`,
    );
  }
  const baseDir = pyOsPath(`${filename}.dir`);
  await mkdir(baseDir, { recursive: true }).catch((error: unknown) => {
    throw pyOsError(error, baseDir);
  });
  const zip = readZip(new Uint8Array(await pyReadBytes(filename)));
  if (zip === undefined) return [];
  const fileList: string[] = [];
  const member = (name: string): Uint8Array => zip.entries[name] ?? new Uint8Array();
  // toc.ncx without its navPoint lines, content.opf without its dc:identifier lines.
  for (const [name, dropped] of [
    ['toc.ncx', 'navPoint'],
    ['content.opf', 'dc:identifier'],
  ] as const) {
    if (!zip.names.includes(name)) continue;
    const path = pyPathJoin(baseDir, name);
    await writeText(path, () =>
      pySplitlines(pyDecodeUtf8(member(name)))
        .filter((line) => !line.includes(dropped))
        .map((line) => `${line}\n`)
        .join(''),
    );
    fileList.push(path);
  }
  for (const name of zip.names) {
    if (!name.endsWith('.html')) continue;
    const path = pyPathJoin(baseDir, name);
    // Written into <file>.dir as named: a member in a subfolder has no folder to go to (upstream quirk).
    await writeText(path, () => {
      const html = pyDecodeUtf8(member(name)).replace(/[\n\r]/g, '');
      return lxmlPrettyHtml(new TextEncoder().encode(html));
    });
    fileList.push(path);
  }
  return pySorted(fileList) as string[];
}

async function compareEpub(result: PyValue, expected: PyValue): Promise<PythonValue> {
  if (result === null) return pyFloat(0.0);
  const resultFiles = await processEpub(result);
  const expectedFiles = await processEpub(expected);
  let metric = 0.0;
  const pairs = Math.min(resultFiles.length, expectedFiles.length);
  for (let index = 0; index < pairs; index += 1) {
    const value = await diffTextFile(resultFiles[index] as string, expectedFiles[index] as string);
    metric += value.value as number;
  }
  // Divided by the result's file count, not the number of pairs (upstream's choice).
  if (resultFiles.length > 0) metric /= resultFiles.length;
  return pyFloat(metric);
}

export const compareEpubMetric = portedMetric(
  { name: 'compare_epub', parameters: ['result', 'expected'] },
  ([result, expected]) => compareEpub(result, expected),
);
