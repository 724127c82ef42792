// Ports of desktop_env/evaluators/metrics/vscode.py: check_json_keybindings, check_json_settings,
// compare_config (the containment_ok variant of the pinned commit) and is_extension_installed.
import { pyAttributeError, pyContains, pyDictGet, pyGetItem, pyStrip } from '../python/builtins.js';
import { pyEquals } from '../python/equality.js';
import { PythonException, pyTryAsync } from '../python/exceptions.js';
import { pyJsonLoads } from '../python/json.js';
import { pyReadText } from '../python/text-files.js';
import { PyDict, pyFloat, pyTruthy, pyTypeName, type PyValue } from '../python/values.js';
import { portedMetric, scoreOf, type PortedMetric } from './metric-function.js';

const checkJsonKeybindings = portedMetric(
  { name: 'check_json_keybindings', parameters: ['actual', 'expected'], varKeywords: true },
  async ([actual, expected]) => {
    // Two loaders, each swallowing every error (bare except): the whole file, then all but line 1.
    const load = (skipFirstLine: boolean) =>
      pyTryAsync<PyValue>(
        async () => {
          const text = await pyReadText(actual);
          const newline = text.indexOf('\n');
          const rest = !skipFirstLine ? text : newline === -1 ? '' : text.slice(newline + 1);
          return pyJsonLoads(rest);
        },
        'BaseException',
        () => null,
      );
    let data: PyValue[] | undefined;
    for (const skipFirstLine of [false, true]) {
      const loaded = await load(skipFirstLine);
      if (Array.isArray(loaded)) {
        data = loaded;
        break;
      }
    }
    if (data === undefined) return pyFloat(0);
    return scoreOf(pyContains(data, pyGetItem(expected, 'expected')));
  },
);

/** Python's `json.loads(value)`, which only takes text. */
function jsonLoadsValue(value: PyValue): PyValue {
  if (typeof value !== 'string') {
    throw new PythonException(
      'TypeError',
      `the JSON object must be str, bytes or bytearray, not ${pyTypeName(value)}`,
    );
  }
  return pyJsonLoads(value);
}

const checkJsonSettings = portedMetric(
  { name: 'check_json_settings', parameters: ['actual', 'expected'], varKeywords: true },
  async ([actual, expected]) => {
    if (!pyTruthy(actual)) return pyFloat(0);
    const data = await pyTryAsync<PyValue | undefined>(
      async () => pyJsonLoads(await pyReadText(actual)),
      'Exception',
      () => undefined,
    );
    if (data === undefined) return pyFloat(0);
    const expect = pyGetItem(expected, 'expected');
    if (!(expect instanceof PyDict)) {
      throw pyAttributeError(expect, 'items');
    }
    for (const [key, value] of expect.items()) {
      if (!pyContains(data, key) || !pyEquals(pyGetItem(data, key), value)) return pyFloat(0);
    }
    return pyFloat(1);
  },
);

/** compare_config's `_is_subset(expected, actual)`: dicts by containment, anything else by ==. */
function isSubset(expected: PyValue, actual: PyValue): boolean {
  if (expected instanceof PyDict) {
    if (!(actual instanceof PyDict)) return false;
    return expected.items().every(([key, value]) => {
      const other = actual.lookup(key);
      return other !== undefined && isSubset(value, other);
    });
  }
  return pyEquals(expected, actual);
}

const compareConfig = portedMetric(
  { name: 'compare_config', parameters: ['actual', 'rules'], varKeywords: true },
  async ([actual, rules], options) => {
    if (!pyTruthy(actual)) return pyFloat(0);
    const expectedText = pyDictGet(rules, 'expected');
    if (!pyTruthy(expectedText)) return pyFloat(0);
    const actualText = await pyReadText(actual);
    if (pyTruthy(pyDictGet(options, 'containment_ok', true))) {
      try {
        const actualJson = pyJsonLoads(actualText);
        const expectedJson = jsonLoadsValue(expectedText);
        // Both parse: containment decides, with no substring fallback.
        return scoreOf(isSubset(expectedJson, actualJson));
      } catch (error) {
        if (!(error instanceof PythonException)) throw error;
        // Either side is not JSON: the stripped expected text as a substring (raises if not a str).
        if (typeof expectedText !== 'string') {
          throw pyAttributeError(expectedText, 'strip');
        }
        return scoreOf(actualText.includes(pyStrip(expectedText)));
      }
    }
    if (pyEquals(actualText, expectedText)) return pyFloat(1);
    try {
      if (pyEquals(pyJsonLoads(actualText), jsonLoadsValue(expectedText))) return pyFloat(1);
    } catch (error) {
      if (!(error instanceof PythonException)) throw error;
    }
    return pyFloat(0);
  },
);

const isExtensionInstalled = portedMetric(
  { name: 'is_extension_installed', parameters: ['actual', 'rules'], varKeywords: true },
  ([actual, rules]) => {
    const type = pyGetItem(rules, 'type');
    if (pyEquals(type, 'contain')) return scoreOf(pyContains(actual, pyGetItem(rules, 'expected')));
    if (pyEquals(pyGetItem(rules, 'type'), 'not_contain')) {
      return scoreOf(!pyContains(actual, pyGetItem(rules, 'expected')));
    }
    throw new PythonException('NotImplementedError', '');
  },
);

export const vscodeMetrics: readonly PortedMetric[] = [
  checkJsonKeybindings,
  checkJsonSettings,
  compareConfig,
  isExtensionInstalled,
];
