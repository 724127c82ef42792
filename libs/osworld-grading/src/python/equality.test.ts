import { describe, expect, it } from 'vitest';
import { PyDict, toPy } from './values.js';
import { pyCompare, pyEquals, pySorted } from './equality.js';
import { PythonException } from './exceptions.js';

const typeErrorOf = (run: () => unknown): string | undefined => {
  try {
    run();
  } catch (error) {
    if (error instanceof PythonException) return `${error.type}: ${error.message}`;
    throw error;
  }
  return undefined;
};

describe('pyEquals', () => {
  it('treats True as 1 and 1 as 1.0, but never a number as its string', () => {
    expect(pyEquals(true, 1)).toBe(true);
    expect(pyEquals(false, 0)).toBe(true);
    expect(pyEquals(1, 1.0)).toBe(true);
    expect(pyEquals(true, 2)).toBe(false);
    expect(pyEquals('1', 1)).toBe(false);
    expect(pyEquals(null, false)).toBe(false);
  });

  it('compares dicts whatever their key order and lists only in order', () => {
    expect(pyEquals(toPy({ a: 1, b: [1, 2] }), toPy({ b: [1, 2], a: true }))).toBe(true);
    expect(pyEquals(toPy({ a: [1, 2] }), toPy({ a: [2, 1] }))).toBe(false);
    expect(pyEquals(toPy({ a: 1 }), toPy({ a: 1, b: null }))).toBe(false);
  });

  it('compares an int beyond 2^53 with a double exactly, as Python does', () => {
    expect(pyEquals(9007199254740993n, 9007199254740992)).toBe(false);
    expect(pyEquals(9007199254740992n, 9007199254740992)).toBe(true);
  });

  it('finds 1, 1.0 and True under one dict key', () => {
    const dict = PyDict.fromEntries([[1, 'int']]);
    expect(dict.lookup(true)).toBe('int');
    expect(dict.lookup(1.0)).toBe('int');
    expect(dict.lookup('1')).toBeUndefined();
  });
});

describe('pyCompare', () => {
  it('orders strings by code point, not by UTF-16 unit', () => {
    // JS says '\u{10000}' < '\uffff' (a surrogate is below 0xffff); Python says the opposite.
    expect(pyCompare('<', '\uffff', '\u{10000}')).toBe(true);
  });

  it('orders lists by their first unequal pair, then by length', () => {
    expect(pyCompare('<', [1, 'b'], [1, 'c'])).toBe(true);
    expect(pyCompare('<', [1], [1, 0])).toBe(true);
    // the first pair differs, so the later str/int pair is never compared
    expect(pyCompare('<', [0, 'a'], [1, 2])).toBe(true);
  });

  it("raises Python's TypeError between types it does not order", () => {
    expect(typeErrorOf(() => pyCompare('<', 'a', 1))).toBe(
      "TypeError: '<' not supported between instances of 'str' and 'int'",
    );
    expect(typeErrorOf(() => pyCompare('>=', null, null))).toMatch(/NoneType/);
  });
});

describe('pySorted', () => {
  it('sorts stably with Python ordering', () => {
    expect(pySorted(['b', 'a', 'B'])).toEqual(['B', 'a', 'b']);
    expect(pySorted([true, 0, 1.5, false])).toEqual([0, false, true, 1.5]);
  });

  it('raises TypeError for a list mixing strings and numbers', () => {
    expect(typeErrorOf(() => pySorted([1, 'a']))).toMatch(/^TypeError: '<' not supported/);
  });

  it('sorts long lists (past the binary-insertion run) the same way', () => {
    const items = Array.from({ length: 300 }, (_, index) => (index * 7919) % 301);
    expect(pySorted(items)).toEqual([...items].sort((a, b) => a - b));
  });
});
