// CPython `difflib.SequenceMatcher(None, a, b)` (no junk function, autojunk on), over code points.

export type MatchingBlock = { a: number; b: number; size: number };

const AUTOJUNK_MIN_LENGTH = 200;

function codePoints(s: string): number[] {
  return Array.from(s, (ch) => ch.codePointAt(0) ?? 0);
}

class CodePointMatcher {
  private readonly b2j = new Map<number, number[]>();

  constructor(
    private readonly a: readonly number[],
    private readonly b: readonly number[],
    autojunk: boolean,
  ) {
    b.forEach((element, j) => {
      const indices = this.b2j.get(element);
      if (indices === undefined) this.b2j.set(element, [j]);
      else indices.push(j);
    });
    // Elements filling more than 1% of a long b are "popular": left out of b2j, but (unlike junk)
    // still allowed when a match is extended at its ends.
    if (autojunk && b.length >= AUTOJUNK_MIN_LENGTH) {
      const limit = Math.floor(b.length / 100) + 1;
      for (const [element, indices] of this.b2j) {
        if (indices.length > limit) this.b2j.delete(element);
      }
    }
  }

  private findLongestMatch(
    aLow: number,
    aHigh: number,
    bLow: number,
    bHigh: number,
  ): MatchingBlock {
    const { a, b } = this;
    let bestI = aLow;
    let bestJ = bLow;
    let bestSize = 0;
    let lengthEndingAt = new Map<number, number>();
    for (let i = aLow; i < aHigh; i += 1) {
      const next = new Map<number, number>();
      for (const j of this.b2j.get(a[i] ?? -1) ?? []) {
        if (j < bLow) continue;
        if (j >= bHigh) break;
        const k = (lengthEndingAt.get(j - 1) ?? 0) + 1;
        next.set(j, k);
        if (k > bestSize) {
          bestI = i - k + 1;
          bestJ = j - k + 1;
          bestSize = k;
        }
      }
      lengthEndingAt = next;
    }
    while (bestI > aLow && bestJ > bLow && a[bestI - 1] === b[bestJ - 1]) {
      bestI -= 1;
      bestJ -= 1;
      bestSize += 1;
    }
    while (
      bestI + bestSize < aHigh &&
      bestJ + bestSize < bHigh &&
      a[bestI + bestSize] === b[bestJ + bestSize]
    ) {
      bestSize += 1;
    }
    return { a: bestI, b: bestJ, size: bestSize };
  }

  matchingBlocks(): MatchingBlock[] {
    const blocks: MatchingBlock[] = [];
    const queue: [number, number, number, number][] = [[0, this.a.length, 0, this.b.length]];
    while (queue.length > 0) {
      const [aLow, aHigh, bLow, bHigh] = queue.pop() ?? [0, 0, 0, 0];
      const match = this.findLongestMatch(aLow, aHigh, bLow, bHigh);
      if (match.size === 0) continue;
      blocks.push(match);
      if (aLow < match.a && bLow < match.b) queue.push([aLow, match.a, bLow, match.b]);
      if (match.a + match.size < aHigh && match.b + match.size < bHigh) {
        queue.push([match.a + match.size, aHigh, match.b + match.size, bHigh]);
      }
    }
    return blocks.sort((x, y) => x.a - y.a || x.b - y.b);
  }
}

/** Matching blocks (without the final sentinel) of `SequenceMatcher(None, a, b).get_matching_blocks()`. */
export function sequenceMatchingBlocks(
  a: string,
  b: string,
  options: { autojunk?: boolean } = {},
): MatchingBlock[] {
  return new CodePointMatcher(
    codePoints(a),
    codePoints(b),
    options.autojunk ?? true,
  ).matchingBlocks();
}

/** `SequenceMatcher(None, a, b).ratio()`: 2 × matched characters / total length (1.0 for two empty strings). */
export function sequenceMatcherRatio(
  a: string,
  b: string,
  options: { autojunk?: boolean } = {},
): number {
  const pointsA = codePoints(a);
  const pointsB = codePoints(b);
  const total = pointsA.length + pointsB.length;
  if (total === 0) return 1.0;
  const matched = new CodePointMatcher(pointsA, pointsB, options.autojunk ?? true)
    .matchingBlocks()
    .reduce((sum, block) => sum + block.size, 0);
  return (2.0 * matched) / total;
}

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
