import { describe, expect, it } from 'vitest';
import {
  comparePythonStrings,
  pythonFloatRepr,
  pythonRound,
  pythonSplitWhitespace,
  pythonStrip,
  pythonStrRepr,
  pythonTupleRepr,
} from './python-text.js';

// Expected values printed by CPython 3.11.
describe('python text semantics', () => {
  it('formats floats like repr()', () => {
    expect(
      [
        100,
        1299,
        877.8,
        0.1 + 0.2,
        1e16,
        1e15,
        1e-5,
        1e-4,
        123456789012345.6,
        1e22,
        5e-324,
        -2.5,
        0,
      ].map(pythonFloatRepr),
    ).toEqual([
      '100.0',
      '1299.0',
      '877.8',
      '0.30000000000000004',
      '1e+16',
      '1000000000000000.0',
      '1e-05',
      '0.0001',
      '123456789012345.6',
      '1e+22',
      '5e-324',
      '-2.5',
      '0.0',
    ]);
  });

  it('writes str and tuple reprs', () => {
    expect(pythonStrRepr("it's")).toBe(`"it's"`);
    expect(pythonStrRepr('say "hi"')).toBe(`'say "hi"'`);
    expect(pythonStrRepr(`both ' and "`)).toBe(`'both \\' and "'`);
    expect(pythonStrRepr('tab\tnew\nline\\ \x00 \u200b 😀 é')).toBe(
      `'tab\\tnew\\nline\\\\ \\x00 \\u200b 😀 é'`,
    );
    expect(pythonTupleRepr(['size', 'XL'])).toBe("('size', 'XL')");
    expect(pythonTupleRepr(["men's"])).toBe(`("men's",)`);
  });

  it('strips and splits on Python whitespace only', () => {
    expect(pythonStrip(' \x1c a\x85 ')).toBe('a');
    expect(pythonStrip('\ufeff a \ufeff')).toBe('\ufeff a \ufeff');
    expect(pythonStrip('..i want a hat...', '.')).toBe('i want a hat');
    expect(pythonSplitWhitespace('  a \u3000 b\tc ')).toEqual(['a', 'b', 'c']);
  });

  it('sorts by code point', () => {
    expect(['b', 'a', '😀', '\uffff', 'B', '_'].sort(comparePythonStrings)).toEqual([
      'B',
      '_',
      'a',
      'b',
      '\uffff',
      '😀',
    ]);
  });

  it('rounds half to even', () => {
    expect([0.5, 1.5, 2.5, -0.5, 84.5, 85.5, 85.49].map(pythonRound)).toEqual([
      0, 2, 2, 0, 84, 86, 85,
    ]);
  });
});
