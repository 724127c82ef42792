// OSWorld's `_match_value_to_rule` and `_match_record` (desktop_env/evaluators/metrics/utils.py),
// shared by check_json, check_csv, check_thunderbird_prefs/filter and check_mp3_meta.
import {
  pyAttributeError,
  pyContains,
  pyGetItem,
  pyIter,
  pySetEquals,
  pyStrip,
  pyToFloat,
} from '../python/builtins.js';
import { pyCompare, pyEquals } from '../python/equality.js';
import { pyTry, PythonException, UnsupportedPythonFeature } from '../python/exceptions.js';
import { pyReCompileValue, pyReFlags } from '../python/re.js';
import { PyDict, pyTypeName, type PyValue } from '../python/values.js';

/** Attributes of Python's `re` module that are not flags: `RegexFlag(0) | re.<name>` is a TypeError. */
const reNonFlagAttributes: Readonly<Record<string, string>> = {
  compile: 'function',
  search: 'function',
  match: 'function',
  fullmatch: 'function',
  split: 'function',
  findall: 'function',
  finditer: 'function',
  sub: 'function',
  subn: 'function',
  escape: 'function',
  purge: 'function',
  template: 'function',
  error: 'type',
  Pattern: 'type',
  Match: 'type',
  RegexFlag: 'EnumType',
  Scanner: 'type',
  copyreg: 'module',
  enum: 'module',
  functools: 'module',
  __name__: 'str',
  __file__: 'str',
  __doc__: 'str',
  __version__: 'str',
  __all__: 'list',
};

/** `getattr(re, name)` for the flag suffixes of a `re.X.Y` method, or-ed as upstream reduces them. */
function reFlagsOf(names: readonly string[]): number {
  let flags = 0;
  for (const name of names) {
    const flag = pyReFlags[name];
    if (flag !== undefined) {
      flags |= flag;
      continue;
    }
    const attribute = reNonFlagAttributes[name];
    if (attribute !== undefined) {
      throw new PythonException(
        'TypeError',
        `unsupported operand type(s) for |: 'RegexFlag' and '${attribute}'`,
      );
    }
    throw new PythonException('AttributeError', `module 're' has no attribute '${name}'`);
  }
  return flags;
}

/** Python's `re.search(pattern, value, flags) is not None`, with its TypeErrors. */
function pyReSearch(pattern: PyValue, value: PyValue, flags: number): boolean {
  const compiled = pyReCompileValue(pattern, flags);
  if (typeof value !== 'string') {
    throw new PythonException(
      'TypeError',
      `expected string or bytes-like object, got '${pyTypeName(value)}'`,
    );
  }
  return compiled.search(value) !== null;
}

/**
 * `_match_value_to_rule(value, rule)`: `rule["method"]` is `re[.FLAG…]`, eq/ne/lt/le/gt/ge,
 * `approx:T`, `range.XY`, `str_list_eq` or `str_set_eq`; anything else raises NotImplementedError.
 */
export function matchValueToRule(value: PyValue, rule: PyValue): boolean {
  const method = pyGetItem(rule, 'method');
  if (typeof method !== 'string') throw pyAttributeError(method, 'startswith');
  if (method.startsWith('re')) {
    // Any method starting with "re" is a regex; the dotted suffixes are re module attributes.
    const flags = reFlagsOf(method.split('.').slice(1));
    return pyReSearch(pyGetItem(rule, 'ref'), value, flags);
  }
  switch (method) {
    case 'eq':
      return pyEquals(value, pyGetItem(rule, 'ref'));
    case 'ne':
      return !pyEquals(value, pyGetItem(rule, 'ref'));
    case 'lt':
      return pyCompare('<', value, pyGetItem(rule, 'ref'));
    case 'le':
      return pyCompare('<=', value, pyGetItem(rule, 'ref'));
    case 'gt':
      return pyCompare('>', value, pyGetItem(rule, 'ref'));
    case 'ge':
      return pyCompare('>=', value, pyGetItem(rule, 'ref'));
  }
  if (method.startsWith('approx')) {
    const threshold = pyToFloat(pyGetItem(method.split(':'), 1));
    // upstream passes rule["ref"] to a logger.debug call before converting the value
    const ref = pyGetItem(rule, 'ref');
    const number = pyTry<number | undefined>(
      () =>
        pyTry(
          () => pyToFloat(value),
          'ValueError',
          () => undefined,
        ),
      'TypeError',
      () => undefined,
    );
    if (number === undefined) return false;
    if (typeof ref !== 'number' && typeof ref !== 'boolean' && typeof ref !== 'bigint') {
      throw new PythonException(
        'TypeError',
        `unsupported operand type(s) for -: 'float' and '${pyTypeName(ref)}'`,
      );
    }
    return Math.abs(number - pyToFloat(ref)) <= threshold;
  }
  if (method === 'spreadsheet_range') {
    throw new UnsupportedPythonFeature('_match_value_to_rule method spreadsheet_range (openpyxl)');
  }
  if (method.startsWith('range.')) {
    // e.g. range.te [0, 2] -> 0 < x <= 2; other letters name no operator function
    const [left, right] = [pyGetItem(method, 6), pyGetItem(method, 7)] as [string, string];
    const operator = (letter: string): '<' | '<=' => {
      if (letter === 't') return '<';
      if (letter === 'e') return '<=';
      throw new PythonException(
        'AttributeError',
        `module 'operator' has no attribute 'l${letter}'`,
      );
    };
    // getattr(operator, ...) is evaluated before rule["ref"][i], and the right side only if the left holds
    const leftOperator = operator(left);
    if (!pyCompare(leftOperator, pyGetItem(pyGetItem(rule, 'ref'), 0), value)) return false;
    const rightOperator = operator(right);
    return pyCompare(rightOperator, value, pyGetItem(pyGetItem(rule, 'ref'), 1));
  }
  if (method === 'str_list_eq' || method === 'str_set_eq') {
    if (typeof value !== 'string') throw pyAttributeError(value, 'strip');
    const parts = pyStrip(value, '"\'').split(',');
    const ref = pyIter(pyGetItem(rule, 'ref'));
    return method === 'str_list_eq' ? pyEquals(parts, ref) : pySetEquals(parts, ref);
  }
  throw new PythonException('NotImplementedError', '');
}

/** `_match_record(pattern, item)`: every key of `pattern` is in `item` with an equal value. */
export function matchRecord(pattern: PyValue, item: PyValue): boolean {
  if (!(pattern instanceof PyDict)) throw pyAttributeError(pattern, 'items');
  return pattern
    .items()
    .every(([key, value]) => pyContains(item, key) && pyEquals(pyGetItem(item, key), value));
}
