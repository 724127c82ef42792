import { describe, expect, it } from 'vitest';
import { pyGetItemOfJson, pySplit, pySplitlines, pyStrip, pyToStr, pyZip } from './builtins.js';
import { PythonException } from './exceptions.js';
import { PyDict, toPy } from './values.js';

// Each expectation is what python3.11 prints for the same call.
describe('str methods', () => {
  it('split() separates on Python whitespace only: a BOM (U+FEFF) is no whitespace', () => {
    expect(pySplit('a\ufeffb c\u3000d\x1ce')).toEqual(['a\ufeffb', 'c', 'd', 'e']);
    expect(pySplit('  ')).toEqual([]);
  });

  it('splitlines() breaks at \\r\\n, \\v, \\x1d, \\u2028… and drops a final empty line', () => {
    expect(pySplitlines('a\r\nb\vc\x1dd\u2028e\n')).toEqual(['a', 'b', 'c', 'd', 'e']);
    expect(pySplitlines('')).toEqual([]);
  });

  it('strip() removes Python whitespace (U+00A0) but not a zero-width space (U+200B)', () => {
    expect(pyStrip(' \u200b x \xa0')).toBe('\u200b x');
  });
});

describe('builtins', () => {
  it('zip() walks a dict by its keys', () => {
    expect(pyZip('ab', toPy({ k: 1, l: 2 }))).toEqual([
      ['a', 'k'],
      ['b', 'l'],
    ]);
  });

  it('str() is the repr of anything but a str', () => {
    expect(pyToStr('x')).toBe('x');
    expect(pyToStr(null)).toBe('None');
    expect(pyToStr([1, 'a'])).toBe("[1, 'a']");
    expect(pyToStr(PyDict.fromEntries([['a', true]]))).toBe("{'a': True}");
  });
});

describe('subscripts of plain JSON', () => {
  it('gives the value itself, or a str character, as Python does', () => {
    const nested = { inner: [1] };
    expect(pyGetItemOfJson({ a: nested }, 'a')).toBe(nested);
    expect(pyGetItemOfJson([nested], -1)).toBe(nested);
    expect(pyGetItemOfJson('abc', -1)).toBe('c');
  });

  it("raises Python's KeyError, IndexError and TypeError", () => {
    expect(() => pyGetItemOfJson({ a: 1 }, 'b')).toThrow(new PythonException('KeyError', "'b'"));
    expect(() => pyGetItemOfJson({}, 'toString')).toThrow(
      new PythonException('KeyError', "'toString'"),
    );
    expect(() => pyGetItemOfJson({ a: 1 }, 0)).toThrow(new PythonException('KeyError', '0'));
    expect(() => pyGetItemOfJson([1, 2], 5)).toThrow(
      new PythonException('IndexError', 'list index out of range'),
    );
    expect(() => pyGetItemOfJson([1], 'type')).toThrow(
      new PythonException('TypeError', 'list indices must be integers or slices, not str'),
    );
    expect(() => pyGetItemOfJson('abc', 'type')).toThrow(
      new PythonException('TypeError', "string indices must be integers, not 'str'"),
    );
    expect(() => pyGetItemOfJson(null, 'type')).toThrow(
      new PythonException('TypeError', "'NoneType' object is not subscriptable"),
    );
  });
});
