// `compare_pdfs(pdf1_path, pdf2_path)` (metrics/chrome.py).
import type { PortedMetric } from '../metric-function.js';
import { PythonException, pyFloat, type PythonValue } from '../python-value.js';
import { indelRatio } from './indel-ratio.js';
import { extractPdfText } from './pdf-text.js';
import {
  bindPythonCall,
  pythonLen,
  pythonReadBytes,
  pythonStrip,
  pythonZip,
} from './python-semantics.js';

/** `extract_text_from_pdf`: every page's text, stripped; `fitz.open(None)` (or "") is an empty document. */
async function pdfText(path: unknown): Promise<string> {
  if (path === null || path === undefined || path === '') return '';
  return pythonStrip(await extractPdfText(new Uint8Array(await pythonReadBytes(path))));
}

export async function comparePdfs(pdf1: unknown, pdf2: unknown): Promise<PythonValue> {
  // Only a non-list gold wraps both sides; a list gold with a str result zips over its characters.
  const [results, golds] = Array.isArray(pdf2) ? [pdf1, pdf2] : [[pdf1], [pdf2]];
  let score = 0.0;
  for (const [result, gold] of pythonZip(results, golds)) {
    try {
      const text1 = await pdfText(result);
      const text2 = await pdfText(gold);
      score += indelRatio(text1, text2) / 100;
    } catch {
      // Upstream logs any error of a pair and scores that pair 0.
    }
  }
  const count = pythonLen(golds);
  if (count === 0) throw new PythonException('ZeroDivisionError', 'float division by zero');
  return pyFloat(score / count);
}

export const comparePdfsMetric: PortedMetric = {
  name: 'compare_pdfs',
  tolerance: 0,
  run: async (args, options) => {
    const { positional } = bindPythonCall(
      'compare_pdfs',
      args,
      options,
      ['pdf1_path', 'pdf2_path'],
      false,
    );
    return comparePdfs(positional[0], positional[1]);
  },
};
