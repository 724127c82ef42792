// CPython `difflib.SequenceMatcher(None, a, b)` (no junk function, autojunk on by default), exact.
// Elements are compared by value: code points for strings (WebShop's thefuzz), lines for files
// (OSWorld's `diff_text_file` and `compare_epub`).

export type MatchingBlock = { a: number; b: number; size: number };

/** Elements a Map can key by value, so `b2j` groups equal elements as Python's dict does. */
export type SequenceElement = string | number;

const AUTOJUNK_MIN_LENGTH = 200;

export class SequenceMatcher<T extends SequenceElement> {
  private readonly b2j = new Map<T, number[]>();

  constructor(
    private readonly a: readonly T[],
    private readonly b: readonly T[],
    options: { autojunk?: boolean } = {},
  ) {
    b.forEach((element, j) => {
      const indices = this.b2j.get(element);
      if (indices === undefined) this.b2j.set(element, [j]);
      else indices.push(j);
    });
    // Elements filling more than 1% of a long b are "popular": left out of b2j, but (unlike junk)
    // still allowed when a match is extended at its ends.
    if ((options.autojunk ?? true) && b.length >= AUTOJUNK_MIN_LENGTH) {
      const limit = Math.floor(b.length / 100) + 1;
      for (const [element, indices] of this.b2j) {
        if (indices.length > limit) this.b2j.delete(element);
      }
    }
  }

  /** `find_longest_match(alo, ahi, blo, bhi)`: the earliest longest block, ties as CPython breaks them. */
  findLongestMatch(aLow: number, aHigh: number, bLow: number, bHigh: number): MatchingBlock {
    const { a, b } = this;
    let bestI = aLow;
    let bestJ = bLow;
    let bestSize = 0;
    let lengthEndingAt = new Map<number, number>();
    for (let i = aLow; i < aHigh; i += 1) {
      const next = new Map<number, number>();
      const element = a[i];
      const indices = element === undefined ? undefined : this.b2j.get(element);
      for (const j of indices ?? []) {
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

  /** `get_matching_blocks()` without the final `(len(a), len(b), 0)` sentinel. */
  matchingBlocks(): MatchingBlock[] {
    const found: MatchingBlock[] = [];
    // CPython works through a LIFO queue; the order only matters for ties, and we follow it anyway.
    const queue: [number, number, number, number][] = [[0, this.a.length, 0, this.b.length]];
    for (let range = queue.pop(); range !== undefined; range = queue.pop()) {
      const [aLow, aHigh, bLow, bHigh] = range;
      const match = this.findLongestMatch(aLow, aHigh, bLow, bHigh);
      if (match.size === 0) continue;
      found.push(match);
      if (aLow < match.a && bLow < match.b) queue.push([aLow, match.a, bLow, match.b]);
      if (match.a + match.size < aHigh && match.b + match.size < bHigh) {
        queue.push([match.a + match.size, aHigh, match.b + match.size, bHigh]);
      }
    }
    found.sort((x, y) => x.a - y.a || x.b - y.b || x.size - y.size);
    // Adjacent blocks are merged, as get_matching_blocks does.
    const blocks: MatchingBlock[] = [];
    for (const block of found) {
      const last = blocks[blocks.length - 1];
      if (last !== undefined && last.a + last.size === block.a && last.b + last.size === block.b) {
        last.size += block.size;
      } else {
        blocks.push({ ...block });
      }
    }
    return blocks;
  }

  /** `ratio()`: 2 × matched elements / total length, 1.0 when both are empty. */
  ratio(): number {
    const total = this.a.length + this.b.length;
    if (total === 0) return 1.0;
    const matched = this.matchingBlocks().reduce((sum, block) => sum + block.size, 0);
    return (2.0 * matched) / total;
  }
}

/** A Python `str` as its sequence of code points (what difflib iterates over). */
export function codePoints(s: string): number[] {
  return Array.from(s, (ch) => ch.codePointAt(0) ?? 0);
}

/** Matching blocks (without the final sentinel) of `SequenceMatcher(None, a, b)` over two strings. */
export function sequenceMatchingBlocks(
  a: string,
  b: string,
  options: { autojunk?: boolean } = {},
): MatchingBlock[] {
  return new SequenceMatcher(codePoints(a), codePoints(b), options).matchingBlocks();
}

/** `SequenceMatcher(None, a, b).ratio()` over two strings (code points, not UTF-16 units). */
export function sequenceMatcherRatio(
  a: string,
  b: string,
  options: { autojunk?: boolean } = {},
): number {
  return new SequenceMatcher(codePoints(a), codePoints(b), options).ratio();
}
