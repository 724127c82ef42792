// `compare_archive(pred_path, gold_path, **kwargs)` (metrics/chrome.py).
import { mkdir, readdir, rm, stat } from 'node:fs/promises';
import type { MetricContext, PortedMetric } from '../metric-function.js';
import { PythonException, pyFloat, pythonFloat, type PythonValue } from '../python-value.js';
import {
  bindPythonCall,
  pythonOsError,
  pythonPath,
  pythonSortedStrings,
  pythonTruthy,
} from './python-semantics.js';
import {
  pythonExists,
  pythonJoin,
  pythonSplitext,
  pythonUnpackArchive,
} from './python-unpack-archive.js';

/** `file_type` → the upstream metric compare_archive imports for it. */
const SUB_METRICS: Readonly<Record<string, string>> = {
  text: 'compare_text_file',
  pdf: 'compare_pdfs',
  docx: 'compare_docx_files',
  ppt: 'compare_pptx_files',
  image: 'compare_images',
  csv: 'compare_csv',
  table: 'compare_table',
  audio: 'compare_audios',
  video: 'compare_videos',
};

async function subMetric(fileType: unknown): Promise<PortedMetric> {
  const name = typeof fileType === 'string' ? SUB_METRICS[fileType] : undefined;
  if (name === undefined) {
    throw new PythonException('ValueError', `[ERROR]: not support file type: ${String(fileType)}`);
  }
  // Looked up at run time, so a newly ported sub-metric serves archives too (a static import of
  // the registry would be circular: the registry lists this metric).
  const { portedMetrics } = await import('../metric-registry.js');
  const metric = portedMetrics.get(name);
  if (metric === undefined) {
    throw new Error(
      `compare_archive: file_type '${fileType as string}' needs ${name}, which is not ported`,
    );
  }
  return metric;
}

async function listdir(path: string): Promise<string[]> {
  try {
    return pythonSortedStrings(await readdir(path));
  } catch (error) {
    throw pythonOsError(error, path);
  }
}

async function makedirs(path: string): Promise<void> {
  if (await pythonExists(path)) throw pythonOsError({ code: 'EEXIST' }, path);
  await mkdir(path, { recursive: true }).catch((error: unknown) => {
    throw pythonOsError(error, path);
  });
}

export async function compareArchive(
  predPath: unknown,
  goldPath: unknown,
  options: Readonly<Record<string, unknown>>,
  context: MetricContext,
): Promise<PythonValue> {
  const { file_path: filePathOption, file_type: fileType, ...kwargs } = options;
  const filePath = filePathOption === undefined ? '' : filePathOption;
  if (!pythonTruthy(predPath)) return pyFloat(0.0);
  const predFolder = `${pythonSplitext(pythonPath(predPath))[0]}_pred`;
  const goldFolder = `${pythonSplitext(pythonPath(goldPath))[0]}_gold`;
  // The prediction is unpacked afresh; a gold folder left by an earlier run is reused as it is.
  const predStat = await stat(predFolder).catch(() => undefined);
  if (predStat?.isDirectory() === true) await rm(predFolder, { recursive: true, force: true });
  await makedirs(predFolder);
  await pythonUnpackArchive(predPath, predFolder);
  if (!(await pythonExists(goldFolder))) {
    await makedirs(goldFolder);
    await pythonUnpackArchive(goldPath, goldFolder);
  }
  const inside = pythonPath(filePath);
  const predFiles = await listdir(pythonJoin(predFolder, inside));
  const goldFiles = await listdir(pythonJoin(goldFolder, inside));
  if (
    predFiles.length !== goldFiles.length ||
    predFiles.some((name, index) => name !== goldFiles[index])
  ) {
    return pyFloat(0.0);
  }
  const metric = await subMetric(fileType === undefined ? 'text' : fileType);
  let score = 0;
  for (const [index, predName] of predFiles.entries()) {
    const goldName = goldFiles[index] ?? predName;
    const value = await metric.run(
      [pythonJoin(predFolder, inside, predName), pythonJoin(goldFolder, inside, goldName)],
      kwargs,
      context,
    );
    score += pythonFloat(value);
  }
  if (predFiles.length === 0) throw new PythonException('ZeroDivisionError', 'division by zero');
  return pyFloat(score / predFiles.length);
}

export const compareArchiveMetric: PortedMetric = {
  name: 'compare_archive',
  tolerance: 0,
  run: async (args, options, context) => {
    const { positional, kwargs } = bindPythonCall(
      'compare_archive',
      args,
      options,
      ['pred_path', 'gold_path'],
      true,
    );
    return compareArchive(positional[0], positional[1], kwargs, context);
  },
};
