// Ports of desktop_env/evaluators/metrics/general.py: check_include_exclude, exact_match, check_csv,
// check_list, run_sqlite3, check_json, check_direct_json_object, file_contains.
import { runSqliteScalar } from '../python-libraries/sqlite-query.js';
import {
  pyAttributeError,
  pyContains,
  pyDictGet,
  pyGetItem,
  pyIter,
  pyLen,
  pyStrip,
} from '../python/builtins.js';
import { pyCsvDictRows } from '../python/csv.js';
import { pyEquals, pySorted } from '../python/equality.js';
import { pyIsInstance, pyTry, pyTryAsync, PythonException } from '../python/exceptions.js';
import { pyJsonLoads } from '../python/json.js';
import { pyPathExists } from '../python/os.js';
import { pyReCompileValue } from '../python/re.js';
import { pyReadText, pyTextLines } from '../python/text-files.js';
import { PyDict, pyFloat, pyTruthy, type PythonValue, type PyValue } from '../python/values.js';
import { pyYamlSafeLoad } from '../python/yaml.js';
import { portedMetric, scoreOf, type PortedMetric } from './metric-function.js';
import { matchRecord, matchValueToRule } from './rule-matching.js';

const checkIncludeExclude = portedMetric(
  { name: 'check_include_exclude', parameters: ['result', 'rules'] },
  ([result, rules]) => {
    if (result === null) return pyFloat(0);
    const include = pyDictGet(rules, 'include', []);
    const exclude = pyDictGet(rules, 'exclude', []);
    return scoreOf(
      pyIter(include).every((item) => pyContains(result, item)) &&
        pyIter(exclude).every((item) => !pyContains(result, item)),
    );
  },
);

const exactMatch = portedMetric(
  { name: 'exact_match', parameters: ['result', 'rules'] },
  ([result, rules]) => {
    return scoreOf(pyEquals(result, pyGetItem(rules, 'expected')));
  },
);

const checkCsv = portedMetric(
  { name: 'check_csv', parameters: ['result', 'rules'] },
  async ([result, rules]) => {
    if (result === null) return pyFloat(0);
    const expectMetrics: boolean[] = new Array(pyLen(pyDictGet(rules, 'expect', []))).fill(false);
    let unexpectMetric = true;
    for (const record of pyCsvDictRows(await pyReadText(result))) {
      pyIter(pyDictGet(rules, 'expect', [])).forEach((rule, index) => {
        if (index >= expectMetrics.length) {
          throw new PythonException('IndexError', 'list assignment index out of range');
        }
        expectMetrics[index] = expectMetrics[index] || matchRecord(rule, record);
      });
      unexpectMetric =
        unexpectMetric &&
        !pyIter(pyDictGet(rules, 'unexpect', [])).some((rule) => matchRecord(rule, record));
    }
    return scoreOf(expectMetrics.every(Boolean) && unexpectMetric);
  },
);

const checkList = portedMetric(
  { name: 'check_list', parameters: ['result', 'rules'] },
  async ([result, rules]) => {
    if (result === null) return pyFloat(0);
    const expectPatterns = pyIter(pyDictGet(rules, 'expect', [])).map((pattern) =>
      pyReCompileValue(pattern),
    );
    const unexpectPatterns = pyIter(pyDictGet(rules, 'unexpect', [])).map((pattern) =>
      pyReCompileValue(pattern),
    );
    const expectMetrics = expectPatterns.map(() => false);
    let unexpectMetric = true;
    // Each line is searched on its own, '\n' included (text mode turned \r\n into \n).
    for (const line of pyTextLines(await pyReadText(result))) {
      expectPatterns.forEach((pattern, index) => {
        expectMetrics[index] = expectMetrics[index] || pattern.search(line) !== null;
      });
      unexpectMetric =
        unexpectMetric && unexpectPatterns.every((pattern) => pattern.search(line) === null);
    }
    return scoreOf(expectMetrics.every(Boolean) && unexpectMetric);
  },
);

const runSqlite3 = portedMetric(
  { name: 'run_sqlite3', parameters: ['result', 'rules'] },
  async ([result, rules]) => {
    return pyFloat(await runSqliteScalar(result, () => pyGetItem(rules, 'sql')));
  },
);

/** Walks `rule["key"]` into `data` as check_json does; KeyError/TypeError give `onMissing`. */
function lookupKeyPath(data: PyValue, rule: PyValue): PyValue | 'missing' {
  let value = data;
  for (const key of pyIter(pyGetItem(rule, 'key'))) {
    try {
      value = pyGetItem(value, key);
    } catch (error) {
      if (pyIsInstance(error, 'KeyError') || pyIsInstance(error, 'TypeError')) return 'missing';
      throw error;
    }
  }
  return value;
}

const checkJson = portedMetric(
  { name: 'check_json', parameters: ['result', 'rules', 'is_yaml'], defaults: { is_yaml: false } },
  async ([result, rules, isYaml]) => {
    if (result === null) return pyFloat(0);
    // A missing file, an empty path or an embedded NUL: os.path.exists is False.
    if (!(await pyPathExists(result))) return pyFloat(0);
    const data = await pyTryAsync<PyValue | undefined>(
      async () => {
        const text = await pyReadText(result);
        return pyTruthy(isYaml) ? pyYamlSafeLoad(text) : pyJsonLoads(text);
      },
      'Exception',
      () => undefined,
    );
    // Unreadable or unparsable content, or empty YAML, scores 0.
    if (data === undefined || (pyTruthy(isYaml) && data === null)) return pyFloat(0);
    const expectRules = pyDictGet(rules, 'expect', new PyDict());
    const unexpectRules = pyDictGet(rules, 'unexpect', new PyDict());
    let metric = true;
    for (const rule of pyIter(expectRules)) {
      const outcome = pyTry<boolean | 'zero'>(
        () => {
          const value = lookupKeyPath(data, rule);
          if (value === 'missing') return 'zero';
          return metric && matchValueToRule(value, rule);
        },
        'Exception',
        () => 'zero',
      );
      if (outcome === 'zero') return pyFloat(0);
      metric = outcome;
    }
    for (const rule of pyIter(unexpectRules)) {
      const outcome = pyTry<boolean | 'zero'>(
        () => {
          const found = lookupKeyPath(data, rule);
          // upstream: a missing key makes the value None, which the rule is then matched against
          const value = found === 'missing' ? null : found;
          return metric && !matchValueToRule(value, rule);
        },
        'Exception',
        () => 'zero',
      );
      if (outcome === 'zero') return pyFloat(0);
      metric = outcome;
    }
    return scoreOf(metric);
  },
);

const checkDirectJsonObject = portedMetric(
  { name: 'check_direct_json_object', parameters: ['result', 'rules'] },
  ([given, rules]) => {
    let result = given;
    if (typeof result === 'string') {
      // upstream replaces every ' by " (a value with an apostrophe then fails to parse, uncaught)
      result = pyJsonLoads(pyStrip(result).replaceAll("'", '"'));
    }
    if (result === null) return pyFloat(0);
    const failed = pyTry(
      () => {
        const expected = pyDictGet(rules, 'expected', new PyDict());
        if (!pyTruthy(expected)) return false;
        if (!(expected instanceof PyDict)) {
          throw pyAttributeError(expected, 'items');
        }
        return expected.items().some(([, value]) => pyEquals(value, '__EVALUATION_FAILED__'));
      },
      'Exception',
      () => true,
    );
    if (failed) return pyFloat(0);
    return pyTry(
      () => compareDirectJson(result, rules),
      'Exception',
      () => pyFloat(0),
    );
  },
);

const keysOf = (value: PyValue): PyValue[] => {
  if (!(value instanceof PyDict)) {
    throw pyAttributeError(value, 'keys');
  }
  return value.keys();
};

function compareDirectJson(result: PyValue, rules: PyValue): PythonValue {
  const expected = pyGetItem(rules, 'expected');
  if (!pyTruthy(pyDictGet(rules, 'expect_in_result', false))) {
    for (const key of keysOf(expected)) {
      const expectedValue = pyDictGet(expected, key);
      const actualValue = pyDictGet(result, key);
      // upstream looks the flag up inside "expected", so it is also compared as a key of its own
      if (pyTruthy(pyDictGet(expected, 'ignore_list_order', false))) {
        const sortedExpected = pySorted(pyIter(expectedValue));
        const sortedResult = pySorted(pyIter(pyDictGet(result, key)));
        if (!pyEquals(sortedExpected, sortedResult)) return pyFloat(0);
      } else if (!pyEquals(expectedValue, actualValue)) {
        return pyFloat(0);
      }
    }
    return pyFloat(1);
  }
  for (const key of keysOf(expected)) {
    const expectedValue = pyDictGet(expected, key);
    if (Array.isArray(expectedValue)) {
      let found = false;
      for (const candidate of expectedValue) {
        const actual = pyDictGet(result, key);
        if (Array.isArray(actual) && pyContains(actual, candidate)) {
          found = true;
          break;
        }
        if (typeof actual === 'string' && pyEquals(candidate, actual)) {
          found = true;
          break;
        }
      }
      if (!found) return pyFloat(0);
    } else if (typeof expectedValue === 'string') {
      if (!pyContains(pyDictGet(result, key), expectedValue)) return pyFloat(0);
    } else {
      return pyFloat(0);
    }
  }
  return pyFloat(1);
}

const fileContains = portedMetric(
  { name: 'file_contains', parameters: ['file_path', 'config'] },
  async ([filePath, config]) => {
    if (!pyTruthy(filePath)) return pyFloat(0);
    // A bare `except:` upstream: any error reading the file or walking "expected" scores 0.
    return pyTryAsync(
      async () => {
        const text = await pyReadText(filePath);
        for (const item of pyIter(pyGetItem(config, 'expected'))) {
          if (!pyContains(text, item)) return pyFloat(0);
        }
        return pyFloat(1);
      },
      'BaseException',
      () => pyFloat(0),
    );
  },
);

export const generalMetrics: readonly PortedMetric[] = [
  checkIncludeExclude,
  exactMatch,
  checkCsv,
  checkList,
  runSqlite3,
  checkJson,
  checkDirectJsonObject,
  fileContains,
];
