// rapidfuzz 3.x `fuzz.ratio(s1, s2)`: the normalised Indel similarity × 100, over code points.
// Indel distance = len1 + len2 − 2 × LCS; the longest common subsequence is counted with the
// bit-parallel algorithm (Hyyrö 2004) in 32-bit words, so long PDF texts stay fast.
import { codePoints } from '@benchfleet/core';

const WORD = 32;

/** Length of the longest common subsequence of two code-point sequences. */
export function longestCommonSubsequence(a: readonly number[], b: readonly number[]): number {
  // The shorter sequence becomes the bit vector.
  const [rows, columns] = a.length >= b.length ? [a, b] : [b, a];
  if (columns.length === 0) return 0;
  const words = Math.ceil(columns.length / WORD);
  const matches = new Map<number, Uint32Array>();
  columns.forEach((element, index) => {
    let mask = matches.get(element);
    if (mask === undefined) {
      mask = new Uint32Array(words);
      matches.set(element, mask);
    }
    mask[index >>> 5] = ((mask[index >>> 5] ?? 0) | (1 << (index & 31))) >>> 0;
  });
  // S starts as all ones; each row keeps the bits whose column is not yet matched.
  const state = new Uint32Array(words).fill(0xffffffff);
  for (const element of rows) {
    const mask = matches.get(element);
    if (mask === undefined) continue;
    let carry = 0;
    for (let word = 0; word < words; word += 1) {
      const s = state[word] ?? 0;
      const u = (s & (mask[word] ?? 0)) >>> 0;
      // S' = (S + U) | (S − U), with the addition's carry running across words.
      const sum = s + u + carry;
      carry = sum > 0xffffffff ? 1 : 0;
      state[word] = ((sum >>> 0) | ((s - u) >>> 0)) >>> 0;
    }
  }
  let zeros = 0;
  for (let index = 0; index < columns.length; index += 1) {
    if ((((state[index >>> 5] ?? 0) >>> (index & 31)) & 1) === 0) zeros += 1;
  }
  return zeros;
}

/** `rapidfuzz.fuzz.ratio(s1, s2)` with its float operations in rapidfuzz's order (100 for two empty strings). */
export function indelRatio(s1: string, s2: string): number {
  const a = codePoints(s1);
  const b = codePoints(s2);
  const maximum = a.length + b.length;
  if (maximum === 0) return 100;
  const distance = maximum - 2 * longestCommonSubsequence(a, b);
  const normalizedDistance = distance / maximum;
  return (1.0 - normalizedDistance) * 100;
}
