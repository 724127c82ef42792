import { codePoints } from '@benchfleet/core';

/**
 * python-Levenshtein's `ratio(a, b)` (the backend thefuzz switches to when it is installed):
 * (total length − indel distance) / total length, i.e. 2 × LCS / total length.
 */
export function levenshteinRatio(a: string, b: string): number {
  const pointsA = codePoints(a);
  const pointsB = codePoints(b);
  const total = pointsA.length + pointsB.length;
  if (total === 0) return 1.0;
  let previous = new Array<number>(pointsB.length + 1).fill(0);
  for (const elementA of pointsA) {
    const current = new Array<number>(pointsB.length + 1).fill(0);
    pointsB.forEach((elementB, j) => {
      current[j + 1] =
        elementA === elementB
          ? (previous[j] ?? 0) + 1
          : Math.max(previous[j + 1] ?? 0, current[j] ?? 0);
    });
    previous = current;
  }
  const longestCommonSubsequence = previous[pointsB.length] ?? 0;
  return (2 * longestCommonSubsequence) / total;
}
