// `compare_archive(pred_path, gold_path, **kwargs)` (metrics/chrome.py).
import { rm, stat } from 'node:fs/promises';
import { pyDictGet, pyToFloat, pyToStr } from '../python/builtins.js';
import { PythonException } from '../python/exceptions.js';
import { pyMakedirs, pyPathExists, pyPathJoin, pySortedListdir, pySplitext } from '../python/os.js';
import { pyUnpackArchive } from '../python/shutil-unpack-archive.js';
import { pyFloat, pyTruthy, type PyValue } from '../python/values.js';
import { portedMetric, type PortedMetric } from './metric-function.js';

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

async function subMetric(fileType: PyValue): Promise<PortedMetric> {
  const name =
    typeof fileType === 'string' && Object.hasOwn(SUB_METRICS, fileType)
      ? SUB_METRICS[fileType]
      : undefined;
  if (name === undefined) {
    throw new PythonException('ValueError', `[ERROR]: not support file type: ${pyToStr(fileType)}`);
  }
  // Looked up at run time, so a newly ported sub-metric serves archives too (a static import of
  // the registry would be circular: the registry lists this metric).
  const { portedMetrics } = await import('./metric-registry.js');
  const metric = portedMetrics.get(name);
  if (metric === undefined) {
    throw new Error(
      `compare_archive: file_type '${fileType as string}' needs ${name}, which is not ported`,
    );
  }
  return metric;
}

/** `compare_archive(pred_path, gold_path, **kwargs)`. */
export const compareArchiveMetric = portedMetric(
  { name: 'compare_archive', parameters: ['pred_path', 'gold_path'], varKeywords: true },
  async ([predPath, goldPath], options, context) => {
    const filePath = pyDictGet(options, 'file_path', '');
    const fileType = pyDictGet(options, 'file_type', 'text');
    // What is left of **kwargs after the two pops goes on to the sub-metric.
    const kwargs = Object.fromEntries(
      options.items().filter(([key]) => key !== 'file_path' && key !== 'file_type'),
    ) as Record<string, PyValue>;
    if (!pyTruthy(predPath)) return pyFloat(0.0);
    const predFolder = `${pySplitext(predPath)[0]}_pred`;
    const goldFolder = `${pySplitext(goldPath)[0]}_gold`;
    // The prediction is unpacked afresh; a gold folder left by an earlier run is reused as it is.
    const predStat = await stat(predFolder).catch(() => undefined);
    if (predStat?.isDirectory() === true) await rm(predFolder, { recursive: true, force: true });
    await pyMakedirs(predFolder);
    await pyUnpackArchive(predPath, predFolder);
    if (!(await pyPathExists(goldFolder))) {
      await pyMakedirs(goldFolder);
      await pyUnpackArchive(goldPath, goldFolder);
    }
    const predFiles = await pySortedListdir(pyPathJoin(predFolder, filePath));
    const goldFiles = await pySortedListdir(pyPathJoin(goldFolder, filePath));
    if (
      predFiles.length !== goldFiles.length ||
      predFiles.some((name, index) => name !== goldFiles[index])
    ) {
      return pyFloat(0.0);
    }
    const metric = await subMetric(fileType);
    let score = 0;
    for (const [index, predName] of predFiles.entries()) {
      const goldName = goldFiles[index] ?? predName;
      const value = await metric.run(
        [pyPathJoin(predFolder, filePath, predName), pyPathJoin(goldFolder, filePath, goldName)],
        kwargs,
        context,
      );
      score += pyToFloat(value.value);
    }
    if (predFiles.length === 0) throw new PythonException('ZeroDivisionError', 'division by zero');
    return pyFloat(score / predFiles.length);
  },
);
