// Python's builtins and str methods as the ports use them — `in`, `x[k]` (also on plain JSON),
// `d.get`, `str()`, `float()`, `iter`, `len`, `zip`, `set(a) == set(b)`, `str.strip/split/splitlines`
// and Python's whitespace — with the exceptions Python raises (AttributeError, KeyError, TypeError…).
import { PyDict, pyRepr, pyTypeName, toPy, type PyValue } from './values.js';
import { pyEquals } from './equality.js';
import { PythonException } from './exceptions.js';

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

/**
 * `container[key]` on plain JSON (a task file's dicts and lists, as JSON.parse gives them): the value
 * as it is, or what Python makes of the subscript (KeyError, IndexError, TypeError, a str's character).
 */
export function pyGetItemOfJson(container: unknown, key: string | number): unknown {
  if (Array.isArray(container) && Number.isInteger(key)) {
    const index = key as number;
    const position = index < 0 ? index + container.length : index;
    if (position >= 0 && position < container.length) return container[position];
  } else if (
    typeof container === 'object' &&
    container !== null &&
    !Array.isArray(container) &&
    !(container instanceof PyDict) &&
    typeof key === 'string' &&
    Object.hasOwn(container, key)
  ) {
    return (container as Record<string, unknown>)[key];
  }
  return pyGetItem(toPy(container), key);
}

/** The AttributeError of `value.name` where the value's type has no such attribute. */
export function pyAttributeError(value: PyValue, name: string): PythonException {
  return new PythonException(
    'AttributeError',
    `'${pyTypeName(value)}' object has no attribute '${name}'`,
  );
}

/** Python's `str(value)`: a str itself, anything else as its repr (true of every PyValue). */
export function pyToStr(value: PyValue): string {
  return typeof value === 'string' ? value : pyRepr(value);
}

/** Python's `container.get(key, fallback)`: only dicts have it. */
export function pyDictGet(container: PyValue, key: PyValue, fallback: PyValue = null): PyValue {
  if (!(container instanceof PyDict)) {
    throw pyAttributeError(container, 'get');
  }
  const value = container.lookup(key);
  return value === undefined ? fallback : value;
}

/** The characters `str.isspace()` accepts, which `str.strip()` removes by default. */
const pythonWhitespace =
  '\t\n\v\f\r\x1c\x1d\x1e\x1f \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006' +
  '\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000';

/** The same set as a RegExp character-class body (what `\s` matches in a str pattern). */
export const pythonWhitespaceClass = [...pythonWhitespace]
  .map((char) => `\\u{${(char.codePointAt(0) ?? 0).toString(16)}}`)
  .join('');
const whitespaceRun = new RegExp(`[${pythonWhitespaceClass}]+`, 'u');

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

/** Python's `text.split()` without arguments: runs of whitespace separate, the ends are dropped. */
export function pySplit(text: string): string[] {
  return text.split(whitespaceRun).filter((part) => part.length > 0);
}

// str.splitlines() boundaries: \n, \r, \r\n, \v, \f, \x1c, \x1d, \x1e, \x85, \u2028, \u2029.
const lineBoundary = /\r\n|[\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029]/u;

/** Python's `text.splitlines()`: no trailing empty line for a final line break. */
export function pySplitlines(text: string): string[] {
  if (text === '') return [];
  const lines = text.split(lineBoundary);
  if (lines[lines.length - 1] === '') lines.pop();
  return lines;
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

/** Python's `zip(a, b)`: pairs until the shorter runs out. */
export function pyZip(a: PyValue, b: PyValue): Array<[PyValue, PyValue]> {
  const left = pyIter(a);
  const right = pyIter(b);
  const length = Math.min(left.length, right.length);
  return Array.from({ length }, (_, index) => [left[index] as PyValue, right[index] as PyValue]);
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
