// `compare_pdfs(pdf1_path, pdf2_path)` (metrics/chrome.py).
import { indelRatio } from '../python-libraries/indel-ratio.js';
import { extractPdfText } from '../python-libraries/pdf-text.js';
import { pyLen, pyStrip, pyZip } from '../python/builtins.js';
import { PythonException } from '../python/exceptions.js';
import { pyReadBytes } from '../python/text-files.js';
import { pyFloat, type PythonValue, type PyValue } from '../python/values.js';
import { portedMetric } from './metric-function.js';

/** `extract_text_from_pdf`: every page's text, stripped; `fitz.open(None)` (or "") is an empty document. */
async function pdfText(path: PyValue): Promise<string> {
  if (path === null || path === '') return '';
  return pyStrip(await extractPdfText(new Uint8Array(await pyReadBytes(path))));
}

async function comparePdfs(pdf1: PyValue, pdf2: PyValue): Promise<PythonValue> {
  // Only a non-list gold wraps both sides; a list gold with a str result zips over its characters.
  const [results, golds]: [PyValue, PyValue] = Array.isArray(pdf2)
    ? [pdf1, pdf2]
    : [[pdf1], [pdf2]];
  let score = 0.0;
  for (const [result, gold] of pyZip(results, golds)) {
    try {
      const text1 = await pdfText(result);
      const text2 = await pdfText(gold);
      score += indelRatio(text1, text2) / 100;
    } catch {
      // Upstream logs any error of a pair and scores that pair 0.
    }
  }
  const count = pyLen(golds);
  if (count === 0) throw new PythonException('ZeroDivisionError', 'float division by zero');
  return pyFloat(score / count);
}

export const comparePdfsMetric = portedMetric(
  { name: 'compare_pdfs', parameters: ['pdf1_path', 'pdf2_path'] },
  ([pdf1, pdf2]) => comparePdfs(pdf1, pdf2),
);
