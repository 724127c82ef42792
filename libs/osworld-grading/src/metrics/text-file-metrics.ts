// `compare_text_file` (metrics/vscode.py) and `diff_text_file` (metrics/general.py).
import { SequenceMatcher } from '@benchfleet/core';
import { pyDictGet, pySplitlines, pyStrip } from '../python/builtins.js';
import { pyReCompile } from '../python/re.js';
import { pyReadText } from '../python/text-files.js';
import { pyFloat, pyTruthy, type PythonValue, type PyValue } from '../python/values.js';
import { portedMetric } from './metric-function.js';

const tabOrNewline = pyReCompile('[\\t\\n]');
const whitespaceRun = pyReCompile('\\s+');

/** `compare_text_file(actual, expected, **options)`: the `ignore_blanks` collapse of a text. */
const collapseBlanks = (text: string): string =>
  whitespaceRun.sub(' ', pyStrip(tabOrNewline.sub(' ', text)));

/** `diff_text_file(result, expect)`: difflib's ratio over the two files' lines (autojunk on). */
export async function diffTextFile(result: PyValue, expect: PyValue): Promise<PythonValue> {
  // Only None scores 0 here; an empty path is opened and raises FileNotFoundError.
  if (result === null) return pyFloat(0.0);
  const resultLines = pySplitlines(await pyReadText(result));
  const expectedLines = pySplitlines(await pyReadText(expect));
  return pyFloat(new SequenceMatcher(resultLines, expectedLines).ratio());
}

/** `compare_text_file(actual, expected, **options)`: 1.0 when both files read the same, else 0.0. */
export const compareTextFileMetric = portedMetric(
  { name: 'compare_text_file', parameters: ['actual', 'expected'], varKeywords: true },
  async ([actual, expected], options) => {
    if (!pyTruthy(actual)) return pyFloat(0.0);
    // Both files are read before any option applies; a missing file raises (the task gets no score).
    let actualText = await pyReadText(actual);
    let expectedText = await pyReadText(expected);
    if (pyTruthy(pyDictGet(options, 'ignore_blanks', false))) {
      actualText = collapseBlanks(actualText);
      expectedText = collapseBlanks(expectedText);
    }
    if (pyTruthy(pyDictGet(options, 'ignore_case', false))) {
      actualText = actualText.toLowerCase();
      expectedText = expectedText.toLowerCase();
    }
    return pyFloat(actualText === expectedText ? 1.0 : 0.0);
  },
);

export const diffTextFileMetric = portedMetric(
  { name: 'diff_text_file', parameters: ['result', 'expect'] },
  ([result, expect]) => diffTextFile(result, expect),
);
