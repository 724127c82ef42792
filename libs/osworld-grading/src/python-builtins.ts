// Python's `in`, `x[k]`, `d.get`, `float()` and `str.strip()` with the exceptions Python raises.
import { PyDict, pyRepr, pyTypeName, type PyValue } from './python-data.js';
import { pyEquals } from './python-equality.js';
import { PythonException } from './python-value.js';

/** Python's `item in container`. */
export function pyContains(container: PyValue, item: PyValue): boolean {
  if (typeof container === 'string') {
    if (typeof item !== 'string') {
      throw new PythonException(
        'TypeError',
        `'in <string>' requires string as left operand, not ${pyTypeName(item)}`,
      );
    }
    return container.includes(item);
  }
  if (Array.isArray(container)) return container.some((element) => pyEquals(element, item));
  if (container instanceof PyDict) return container.has(item);
  throw new PythonException(
    'TypeError',
    `argument of type '${pyTypeName(container)}' is not iterable`,
  );
}

/** The integer a Python index stands for, or undefined if it is not an int (bools are ints). */
function indexOf(key: PyValue): number | undefined {
  if (typeof key === 'boolean') return key ? 1 : 0;
  if (typeof key === 'number' && Number.isInteger(key)) return key;
  if (typeof key === 'bigint') return Number(key);
  return undefined;
}

/** Python's `container[key]` for dicts, lists and strs. */
export function pyGetItem(container: PyValue, key: PyValue): PyValue {
  if (container instanceof PyDict) {
    const value = container.lookup(key);
    if (value === undefined) throw new PythonException('KeyError', pyRepr(key));
    return value;
  }
  if (Array.isArray(container) || typeof container === 'string') {
    const index = indexOf(key);
    const kind = Array.isArray(container) ? 'list' : 'string';
    if (index === undefined) {
      throw new PythonException(
        'TypeError',
        Array.isArray(container)
          ? `list indices must be integers or slices, not ${pyTypeName(key)}`
          : `string indices must be integers, not '${pyTypeName(key)}'`,
      );
    }
    // Python indexes a str by code point.
    const items: readonly PyValue[] = Array.isArray(container) ? container : [...container];
    const position = index < 0 ? index + items.length : index;
    if (position < 0 || position >= items.length) {
      throw new PythonException('IndexError', `${kind} index out of range`);
    }
    return items[position] as PyValue;
  }
  throw new PythonException('TypeError', `'${pyTypeName(container)}' object is not subscriptable`);
}

/** Python's `container.get(key, fallback)`: only dicts have it. */
export function pyDictGet(container: PyValue, key: PyValue, fallback: PyValue = null): PyValue {
  if (!(container instanceof PyDict)) {
    throw new PythonException(
      'AttributeError',
      `'${pyTypeName(container)}' object has no attribute 'get'`,
    );
  }
  const value = container.lookup(key);
  return value === undefined ? fallback : value;
}

/** The characters `str.isspace()` accepts, which `str.strip()` removes by default. */
export const pythonWhitespace =
  '\t\n\v\f\r\x1c\x1d\x1e\x1f \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006' +
  '\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000';

/** Python's `text.strip(chars)` (whitespace by Python's definition when chars is omitted). */
export function pyStrip(text: string, chars: string = pythonWhitespace): string {
  const strip = new Set(chars);
  const points = [...text];
  let start = 0;
  let end = points.length;
  while (start < end && strip.has(points[start] as string)) start++;
  while (end > start && strip.has(points[end - 1] as string)) end--;
  return points.slice(start, end).join('');
}

const floatLiteral =
  /^[+-]?(?:(?:\d(?:_?\d)*)(?:\.(?:\d(?:_?\d)*)?)?|\.\d(?:_?\d)*)(?:[eE][+-]?\d(?:_?\d)*)?$/;
const floatSpecial = /^([+-]?)(inf|infinity|nan)$/i;

/** Python's `float(value)`. */
export function pyToFloat(value: PyValue): number {
  if (typeof value === 'boolean') return value ? 1 : 0;
  if (typeof value === 'number') return value;
  if (typeof value === 'bigint') {
    const converted = Number(value);
    if (!Number.isFinite(converted)) {
      throw new PythonException('OverflowError', 'int too large to convert to float');
    }
    return converted;
  }
  if (typeof value === 'string') {
    const text = pyStrip(value);
    const special = floatSpecial.exec(text);
    if (special) {
      const magnitude = (special[2] as string).toLowerCase() === 'nan' ? Number.NaN : Infinity;
      return special[1] === '-' ? -magnitude : magnitude;
    }
    if (floatLiteral.test(text)) return Number(text.replaceAll('_', ''));
    throw new PythonException('ValueError', `could not convert string to float: ${pyRepr(value)}`);
  }
  throw new PythonException(
    'TypeError',
    `float() argument must be a string or a real number, not '${pyTypeName(value)}'`,
  );
}

/** What `for item in value` walks: a list's items, a str's characters, a dict's keys. */
export function pyIter(value: PyValue): PyValue[] {
  if (typeof value === 'string') return [...value];
  if (Array.isArray(value)) return [...value];
  if (value instanceof PyDict) return value.keys();
  throw new PythonException('TypeError', `'${pyTypeName(value)}' object is not iterable`);
}

/** Python's `len(value)`. */
export function pyLen(value: PyValue): number {
  if (typeof value === 'string') return [...value].length;
  if (Array.isArray(value)) return value.length;
  if (value instanceof PyDict) return value.size;
  throw new PythonException('TypeError', `object of type '${pyTypeName(value)}' has no len()`);
}

/** Python's `set(a) == set(b)` (elements must be hashable). */
export function pySetEquals(a: readonly PyValue[], b: readonly PyValue[]): boolean {
  const left = PyDict.fromEntries(a.map((item) => [item, null]));
  const right = PyDict.fromEntries(b.map((item) => [item, null]));
  return left.size === right.size && left.keys().every((key) => right.has(key));
}
