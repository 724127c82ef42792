// Ports of desktop_env/evaluators/metrics/thunderbird.py: check_thunderbird_prefs (prefs.js) and
// check_thunderbird_filter (msgFilterRules.dat).
import { portedMetric, scoreOf, type PortedMetric } from './metric-function.js';
import { pyContains, pyDictGet, pyGetItem, pyIter, pyLen, pyStrip } from '../python/builtins.js';
import { PyDict, pyFloat, type PyValue } from '../python/values.js';
import { pyJsonLoads } from '../python/json.js';
import { pyReCompile } from '../python/re.js';
import { pyReadText, pyTextLines } from '../python/text-files.js';
import { matchRecord, matchValueToRule } from './rule-matching.js';
import { PythonException } from '../python/exceptions.js';

/** Upstream's `_pref_pattern` (Python syntax): exactly one space after the comma, value to `);`. */
const prefPattern = pyReCompile('^user_pref\\("(?P<key>(?:[^"]|\\\\")+)\\", (?P<val>.+)\\);$');

const checkThunderbirdPrefs = portedMetric(
  { name: 'check_thunderbird_prefs', parameters: ['result', 'rule'] },
  async ([result, rule]) => {
    if (result === null) return pyFloat(0);
    const expectRules = pyDictGet(rule, 'expect', new PyDict());
    const unexpectRules = pyDictGet(rule, 'unexpect', new PyDict());
    // A pref Thunderbird never wrote (left at its default) keeps its expect rule False.
    const expectMetrics = PyDict.fromEntries(pyIter(expectRules).map((key) => [key, false]));
    let unexpectMetric = true;
    for (const line of pyTextLines(await pyReadText(result))) {
      const match = prefPattern.match(pyStrip(line));
      if (match === null) continue;
      const key = match[1] as string;
      // The value is parsed as JSON; a value that is not JSON raises, uncaught upstream.
      const value = pyJsonLoads(match[2] as string);
      if (pyContains(expectRules, key)) {
        expectMetrics.set(key, matchValueToRule(value, pyGetItem(expectRules, key)));
      } else if (pyContains(unexpectRules, key)) {
        unexpectMetric = unexpectMetric && !matchValueToRule(value, pyGetItem(unexpectRules, key));
      }
    }
    const allExpected = expectMetrics.items().every(([, passed]) => passed === true);
    return scoreOf(allExpected && unexpectMetric);
  },
);

/** Upstream's `_value_processor`: unescapes \" then \\. */
const unescapeValue = (value: string): string =>
  value.replaceAll('\\"', '"').replaceAll('\\\\', '\\');

/** Upstream's `_condition_pattern` (Python syntax): `AND (…)`/`OR (…)` terms, or ALL. */
const conditionPattern = pyReCompile(
  '\\b(?:AND|OR) \\((?:[\\w ]+),(?:[\\w \']+),(?:"(?:(?:[^"]|\\")+)"|(?:[^)]+))\\)|\\bALL\\b',
);

/** Python's `line[start:-2]`, by code point. */
const sliceValue = (line: string, start: number): string => [...line].slice(start, -2).join('');

const filterFields: ReadonlyArray<readonly [string, string]> = [
  ['name=', 'name'],
  ['enabled=', 'enabled'],
  ['type=', 'type'],
  ['action=', 'action'],
  ['actionValue=', 'actionValue'],
];

const checkThunderbirdFilter = portedMetric(
  { name: 'check_thunderbird_filter', parameters: ['result', 'rules'] },
  async ([result, rules]) => {
    if (result === null) return pyFloat(0);
    const filters: PyDict[] = [];
    let current: PyDict | undefined;
    const currentFilter = (): PyDict => {
      if (current === undefined) {
        throw new PythonException(
          'UnboundLocalError',
          "cannot access local variable 'filter_' where it is not associated with a value",
        );
      }
      return current;
    };
    for (const line of pyTextLines(await pyReadText(result))) {
      // Each value is line[len('key="'):-2]: the closing quote and the newline are cut off, so a
      // last line without a newline loses a real character.
      const field = filterFields.find(([prefix]) => line.startsWith(prefix));
      if (field !== undefined) {
        const [prefix, key] = field;
        if (key === 'name') current = new PyDict();
        currentFilter().set(key, unescapeValue(sliceValue(line, prefix.length + 1)));
      } else if (line.startsWith('condition=')) {
        const condition = unescapeValue(sliceValue(line, 11));
        const filter = currentFilter();
        filter.set('condition', conditionPattern.findall(condition) as PyValue[]);
        // A filter is recorded only when its condition line is read (the same dict again if twice).
        filters.push(filter);
      }
    }
    const expectMetrics: boolean[] = new Array(pyLen(pyDictGet(rules, 'expect', []))).fill(false);
    let unexpectMetric = true;
    for (const filter of filters) {
      pyIter(pyDictGet(rules, 'expect', [])).forEach((rule, index) => {
        expectMetrics[index] = expectMetrics[index] || matchRecord(rule, filter);
      });
      unexpectMetric =
        unexpectMetric &&
        !pyIter(pyDictGet(rules, 'unexpect', [])).some((rule) => matchRecord(rule, filter));
    }
    return scoreOf(expectMetrics.every(Boolean) && unexpectMetric);
  },
);

export const thunderbirdMetrics: readonly PortedMetric[] = [
  checkThunderbirdPrefs,
  checkThunderbirdFilter,
];
