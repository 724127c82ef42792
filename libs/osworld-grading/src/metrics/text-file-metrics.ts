// `compare_text_file` (metrics/vscode.py) and `diff_text_file` (metrics/general.py).
import { SequenceMatcher } from '@benchfleet/core';
import type { PortedMetric } from '../metric-function.js';
import { pyFloat, type PythonValue } from '../python-value.js';
import {
  bindPythonCall,
  pythonReadText,
  pythonSplitlines,
  pythonStrip,
  pythonTruthy,
  pythonWhitespaceRun,
} from './python-semantics.js';

/** `compare_text_file(actual, expected, **options)`: 1.0 when both files read the same, else 0.0. */
export async function compareTextFile(
  actual: unknown,
  expected: unknown,
  options: Readonly<Record<string, unknown>>,
): Promise<PythonValue> {
  if (!pythonTruthy(actual)) return pyFloat(0.0);
  // Both files are read before any option applies; a missing file raises (the task gets no score).
  let actualText = await pythonReadText(actual);
  let expectedText = await pythonReadText(expected);
  if (pythonTruthy(options.ignore_blanks)) {
    const collapse = (text: string): string =>
      pythonStrip(text.replace(/[\t\n]/g, ' ')).replace(pythonWhitespaceRun, ' ');
    actualText = collapse(actualText);
    expectedText = collapse(expectedText);
  }
  if (pythonTruthy(options.ignore_case)) {
    actualText = actualText.toLowerCase();
    expectedText = expectedText.toLowerCase();
  }
  return pyFloat(actualText === expectedText ? 1.0 : 0.0);
}

/** `diff_text_file(result, expect)`: difflib's ratio over the two files' lines (autojunk on). */
export async function diffTextFile(result: unknown, expect: unknown): Promise<PythonValue> {
  // Only None scores 0 here; an empty path is opened and raises FileNotFoundError.
  if (result === null || result === undefined) return pyFloat(0.0);
  const resultLines = pythonSplitlines(await pythonReadText(result));
  const expectedLines = pythonSplitlines(await pythonReadText(expect));
  return pyFloat(new SequenceMatcher(resultLines, expectedLines).ratio());
}

export const compareTextFileMetric: PortedMetric = {
  name: 'compare_text_file',
  tolerance: 0,
  run: async (args, options) => {
    const { positional, kwargs } = bindPythonCall(
      'compare_text_file',
      args,
      options,
      ['actual', 'expected'],
      true,
    );
    return compareTextFile(positional[0], positional[1], kwargs);
  },
};

export const diffTextFileMetric: PortedMetric = {
  name: 'diff_text_file',
  tolerance: 0,
  run: async (args, options) => {
    const { positional } = bindPythonCall(
      'diff_text_file',
      args,
      options,
      ['result', 'expect'],
      false,
    );
    return diffTextFile(positional[0], positional[1]);
  },
};
