import { describe, expect, it } from 'vitest';
import { indelRatio, longestCommonSubsequence } from './indel-ratio.js';

/** The textbook O(n·m) LCS, to check the bit-parallel one against. */
function lcsByTable(a: readonly number[], b: readonly number[]): number {
  let previous = new Array<number>(b.length + 1).fill(0);
  for (const x of a) {
    const current = [0];
    b.forEach((y, j) => {
      current.push(
        x === y ? (previous[j] ?? 0) + 1 : Math.max(previous[j + 1] ?? 0, current[j] ?? 0),
      );
    });
    previous = current;
  }
  return previous[b.length] ?? 0;
}

describe('longestCommonSubsequence (bit-parallel)', () => {
  it('agrees with the table method across word boundaries (32, 64, 100+ elements)', () => {
    let seed = 7;
    const random = (): number => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      return seed / 2147483648;
    };
    for (const [lengthA, lengthB] of [
      [5, 9],
      [31, 33],
      [64, 65],
      [130, 97],
      [200, 250],
    ] as const) {
      for (let round = 0; round < 5; round += 1) {
        const a = Array.from({ length: lengthA }, () => Math.floor(random() * 4));
        const b = Array.from({ length: lengthB }, () => Math.floor(random() * 4));
        expect(longestCommonSubsequence(a, b)).toBe(lcsByTable(a, b));
      }
    }
  });
});

describe('indelRatio (rapidfuzz fuzz.ratio)', () => {
  it('gives rapidfuzz’s documented value and its float result exactly', () => {
    expect(indelRatio('this is a test', 'this is a test!')).toBe(96.55172413793103);
    // compare_pdfs' case_diff: "Hello World" vs "hello world" → 0.8181818181818181 after / 100.
    expect(indelRatio('Hello World', 'hello world') / 100).toBe(0.8181818181818181);
  });

  it('counts code points, and scores two empty strings 100 and one empty string 0', () => {
    expect(indelRatio('😀a', '😀b')).toBe(50);
    expect(indelRatio('', '')).toBe(100);
    expect(indelRatio('', 'abc')).toBe(0);
  });
});
