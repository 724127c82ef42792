// `compare_archive(pred_path, gold_path, **kwargs)` (metrics/chrome.py).
import { rm, stat } from 'node:fs/promises';
import { pyDictGet, pyToFloat, pyToStr } from '../python/builtins.js';
import { PythonException } from '../python/exceptions.js';
import { pyMakedirs, pyPathExists, pyPathJoin, pySortedListdir, pySplitext } from '../python/os.js';
import { pyUnpackArchive } from '../python/shutil-unpack-archive.js';
import { pyFloat, pyTruthy, type PyValue } from '../python/values.js';
import { portedMetric, type PortedMetric } from './metric-function.js';
import { comparePdfsMetric } from './pdf-metrics.js';
import { compareTextFileMetric } from './text-file-metrics.js';

/**
 * `file_type` → the upstream metric compare_archive calls for it, with our port where there is one.
 * The ports are imported here rather than looked up in the metric registry, which lists this
 * metric: porting another sub-metric means adding it here.
 */
export const ARCHIVE_SUB_METRICS: Readonly<
  Record<string, { readonly upstream: string; readonly ported?: PortedMetric }>
> = {
  text: { upstream: 'compare_text_file', ported: compareTextFileMetric },
  pdf: { upstream: 'compare_pdfs', ported: comparePdfsMetric },
  docx: { upstream: 'compare_docx_files' },
  ppt: { upstream: 'compare_pptx_files' },
  image: { upstream: 'compare_images' },
  csv: { upstream: 'compare_csv' },
  table: { upstream: 'compare_table' },
  audio: { upstream: 'compare_audios' },
  video: { upstream: 'compare_videos' },
};

function subMetric(fileType: PyValue): PortedMetric {
  const sub =
    typeof fileType === 'string' && Object.hasOwn(ARCHIVE_SUB_METRICS, fileType)
      ? ARCHIVE_SUB_METRICS[fileType]
      : undefined;
  if (sub === undefined) {
    throw new PythonException('ValueError', `[ERROR]: not support file type: ${pyToStr(fileType)}`);
  }
  if (sub.ported === undefined) {
    throw new Error(
      `compare_archive: file_type '${fileType as string}' needs ${sub.upstream}, which is not ported`,
    );
  }
  return sub.ported;
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
    const metric = subMetric(fileType);
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
