// Python's ==, <, <=, >, >= and sorted() on JSON-like values, whose quirks leak into OSWorld's scores:
// True == 1 == 1.0, dicts equal whatever their key order, lists only in the same order.
import { PyDict, PyOpaque, pyTypeName, type PyValue } from './values.js';
import { PythonException } from './exceptions.js';

type Numeric = boolean | number | bigint;

const isNumeric = (value: PyValue): value is Numeric =>
  typeof value === 'boolean' || typeof value === 'number' || typeof value === 'bigint';

const numericOf = (value: Numeric): number | bigint =>
  typeof value === 'boolean' ? (value ? 1 : 0) : value;

/** Exact comparison of two Python numbers: -1, 0, 1, or NaN when unordered. */
function compareNumbers(a: Numeric, b: Numeric): number {
  const x = numericOf(a);
  const y = numericOf(b);
  if (typeof x === 'number' && typeof y === 'number') {
    return Number.isNaN(x) || Number.isNaN(y) ? Number.NaN : Math.sign(x - y) || 0;
  }
  if (typeof x === 'bigint' && typeof y === 'bigint') return x < y ? -1 : x > y ? 1 : 0;
  // One int beyond 2^53 and one double: compare exactly, as Python does.
  const [big, float, flip] = typeof x === 'bigint' ? [x, y as number, 1] : [y as bigint, x, -1];
  if (Number.isNaN(float)) return Number.NaN;
  if (!Number.isFinite(float)) return float > 0 ? -flip : flip;
  const floor = BigInt(Math.floor(float));
  if (big !== floor) return big < floor ? -flip : flip;
  return Number.isInteger(float) ? 0 : -flip;
}

/** Compares two strings by code point, as Python does (JS `<` compares UTF-16 units). */
function compareStrings(a: string, b: string): number {
  if (a === b) return 0;
  const left = a[Symbol.iterator]();
  const right = b[Symbol.iterator]();
  for (;;) {
    const x = left.next();
    const y = right.next();
    if (x.done || y.done) return x.done ? (y.done ? 0 : -1) : 1;
    const cx = x.value.codePointAt(0) ?? 0;
    const cy = y.value.codePointAt(0) ?? 0;
    if (cx !== cy) return cx < cy ? -1 : 1;
  }
}

/** Python's `a == b`. */
export function pyEquals(a: PyValue, b: PyValue): boolean {
  if (isNumeric(a) && isNumeric(b)) return compareNumbers(a, b) === 0;
  if (typeof a === 'string' || typeof b === 'string') return a === b;
  if (a === null || b === null) return a === b;
  if (Array.isArray(a) || Array.isArray(b)) {
    if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false;
    return a.every((item, index) => pyEquals(item, b[index] as PyValue));
  }
  if (a instanceof PyDict && b instanceof PyDict) {
    if (a.size !== b.size) return false;
    return a.items().every(([key, value]) => {
      const other = b.lookup(key);
      return other !== undefined && pyEquals(value, other);
    });
  }
  if (a instanceof PyOpaque && b instanceof PyOpaque) {
    return a.typeName === b.typeName && a.key === b.key;
  }
  return false;
}

export type PyComparison = '<' | '<=' | '>' | '>=';

const holds = (op: PyComparison, order: number): boolean => {
  if (Number.isNaN(order)) return false;
  switch (op) {
    case '<':
      return order < 0;
    case '<=':
      return order <= 0;
    case '>':
      return order > 0;
    case '>=':
      return order >= 0;
  }
};

/** Python's `a < b` (and <=, >, >=): TypeError between types Python does not order. */
export function pyCompare(op: PyComparison, a: PyValue, b: PyValue): boolean {
  if (isNumeric(a) && isNumeric(b)) return holds(op, compareNumbers(a, b));
  if (typeof a === 'string' && typeof b === 'string') return holds(op, compareStrings(a, b));
  if (Array.isArray(a) && Array.isArray(b)) {
    // Lexicographic: the first unequal pair decides with the same operator, else the lengths.
    const length = Math.min(a.length, b.length);
    for (let index = 0; index < length; index++) {
      const x = a[index] as PyValue;
      const y = b[index] as PyValue;
      if (!pyEquals(x, y)) return pyCompare(op, x, y);
    }
    return holds(op, Math.sign(a.length - b.length));
  }
  if (a instanceof PyOpaque && b instanceof PyOpaque && a.typeName === b.typeName) {
    return holds(op, compareStrings(a.key, b.key));
  }
  throw new PythonException(
    'TypeError',
    `'${op}' not supported between instances of '${pyTypeName(a)}' and '${pyTypeName(b)}'`,
  );
}

const lessThan = (a: PyValue, b: PyValue): boolean => pyCompare('<', a, b);

/** CPython's count_run: the length of the run at `lo`, reversed in place if strictly descending. */
function countRun(items: PyValue[], lo: number, hi: number): number {
  if (lo + 1 === hi) return 1;
  let n = 2;
  if (lessThan(items[lo + 1] as PyValue, items[lo] as PyValue)) {
    for (let index = lo + 2; index < hi; index++, n++) {
      if (!lessThan(items[index] as PyValue, items[index - 1] as PyValue)) break;
    }
    const run = items.slice(lo, lo + n).reverse();
    items.splice(lo, n, ...run);
  } else {
    for (let index = lo + 2; index < hi; index++, n++) {
      if (lessThan(items[index] as PyValue, items[index - 1] as PyValue)) break;
    }
  }
  return n;
}

/** CPython's binarysort: items[lo, start) are sorted; insert the rest up to hi. */
function binarySort(items: PyValue[], lo: number, hi: number, start: number): void {
  for (let next = start; next < hi; next++) {
    const pivot = items[next] as PyValue;
    let left = lo;
    let right = next;
    do {
      const middle = left + ((right - left) >> 1);
      if (lessThan(pivot, items[middle] as PyValue)) right = middle;
      else left = middle + 1;
    } while (left < right);
    items.splice(next, 1);
    items.splice(left, 0, pivot);
  }
}

/** CPython's merge_compute_minrun. */
function minRun(n: number): number {
  let r = 0;
  while (n >= 64) {
    r |= n & 1;
    n >>= 1;
  }
  return n + r;
}

/**
 * Python's `sorted(items)`: stable, only `<`, raising TypeError where Python would. Below 64 items
 * it makes exactly CPython's comparisons (count_run + binary insertion); longer lists merge CPython's
 * runs without galloping, which gives the same order but may compare other pairs.
 */
export function pySorted(items: readonly PyValue[]): PyValue[] {
  const work = [...items];
  const n = work.length;
  if (n < 2) return work;
  const min = minRun(n);
  const runs: Array<[number, number]> = [];
  for (let lo = 0; lo < n;) {
    let length = countRun(work, lo, n);
    if (length < min) {
      const forced = Math.min(min, n - lo);
      binarySort(work, lo, lo + forced, lo + length);
      length = forced;
    }
    runs.push([lo, lo + length]);
    lo += length;
  }
  let merged = runs.map(([lo, hi]) => work.slice(lo, hi));
  while (merged.length > 1) {
    const next: PyValue[][] = [];
    for (let index = 0; index < merged.length; index += 2) {
      const left = merged[index] as PyValue[];
      const right = merged[index + 1];
      if (right === undefined) {
        next.push(left);
        continue;
      }
      const out: PyValue[] = [];
      let i = 0;
      let j = 0;
      while (i < left.length && j < right.length) {
        // Stable: take from the right run only when strictly less.
        if (lessThan(right[j] as PyValue, left[i] as PyValue)) out.push(right[j++] as PyValue);
        else out.push(left[i++] as PyValue);
      }
      next.push([...out, ...left.slice(i), ...right.slice(j)]);
    }
    merged = next;
  }
  return merged[0] ?? [];
}
