import { describe, expect, it } from 'vitest';
import {
  SequenceMatcher,
  sequenceMatcherRatio,
  sequenceMatchingBlocks,
} from './sequence-matcher.js';

const longA =
  'stainless steel watch band compatible with apple watch 38mm 40mm 41mm 42mm 44mm 45mm metal replacement strap with quick release pins for women and men, adjustable size, silver black rose gold colors available now';
const longB =
  'metal watch band for apple watch series 7 6 5 4 3 2 1 se, stainless steel replacement strap 38mm 40mm 41mm with butterfly clasp, quick release pins, adjustable length for women men, gift box included, silver';

// Expected values printed by CPython 3.11's difflib.
describe('sequenceMatcherRatio / sequenceMatchingBlocks', () => {
  it('finds the same matching blocks as difflib', () => {
    expect(sequenceMatchingBlocks('abxcd', 'abcd')).toEqual([
      { a: 0, b: 0, size: 2 },
      { a: 3, b: 2, size: 2 },
    ]);
    expect(sequenceMatchingBlocks('qabxcd', 'abycdf')).toEqual([
      { a: 1, b: 0, size: 2 },
      { a: 4, b: 3, size: 2 },
    ]);
    expect(
      sequenceMatcherRatio(
        'private Thread currentThread;',
        'private volatile Thread currentThread;',
      ),
    ).toBe(0.8656716417910447);
  });

  it('drops popular characters of a b of 200+ characters (autojunk), but extends matches over them', () => {
    expect(longA.length).toBe(212);
    expect(sequenceMatchingBlocks(longA, longB)).toEqual([
      { a: 54, b: 91, size: 16 },
      { a: 113, b: 128, size: 19 },
      { a: 150, b: 147, size: 13 },
      { a: 167, b: 199, size: 8 },
    ]);
    expect(sequenceMatcherRatio(longA, longB)).toBe(0.26730310262529833);
    expect(sequenceMatcherRatio(longA, longB, { autojunk: false })).toBe(0.3818615751789976);
    expect(
      sequenceMatcherRatio('a'.repeat(10) + 'b'.repeat(300), 'b'.repeat(250) + 'a'.repeat(5)),
    ).toBe(0);
  });

  it('counts code points, not UTF-16 units, and gives 1 for two empty strings', () => {
    expect(sequenceMatcherRatio('😀a', '😀b')).toBe(0.5);
    expect(sequenceMatcherRatio('', '')).toBe(1);
  });
});

// Expected values printed by CPython 3.11's difflib over lists of lines.
describe('SequenceMatcher over lines', () => {
  it('matches whole lines as CPython does', () => {
    const sut = new SequenceMatcher(
      ['h1 {', '  color: red;', '}', '', 'body {', '  width: 300px;', '}'],
      ['body {', '  width: 300px;', '}', '', 'h1 {', '  color: red;', '}'],
    );
    expect(sut.matchingBlocks()).toEqual([{ a: 0, b: 4, size: 3 }]);
    expect(sut.ratio()).toBe(0.42857142857142855);
    expect(new SequenceMatcher(['a', 'b', 'c', 'd'], ['a', 'c']).ratio()).toBe(0.6666666666666666);
  });

  it('treats popular lines of a 200+ line b as autojunk, extending matches over them', () => {
    const a = ['x', 'x', 'x', 'header', 'x', 'x'];
    const b = ['header', ...Array<string>(199).fill('x'), 'footer'];
    const sut = new SequenceMatcher(a, b);
    expect(sut.matchingBlocks()).toEqual([{ a: 3, b: 0, size: 3 }]);
    expect(sut.ratio()).toBe(0.028985507246376812);
    const withoutAutojunk = new SequenceMatcher(a, b, { autojunk: false });
    expect(withoutAutojunk.matchingBlocks()).toEqual([
      { a: 0, b: 1, size: 3 },
      { a: 4, b: 4, size: 2 },
    ]);
    expect(withoutAutojunk.ratio()).toBe(0.04830917874396135);
  });

  it('gives 1 for two empty lists and 0 when nothing matches', () => {
    expect(new SequenceMatcher<string>([], []).ratio()).toBe(1);
    expect(new SequenceMatcher<string>([], ['a']).ratio()).toBe(0);
  });
});
