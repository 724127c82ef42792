// Document-at-a-time top-k retrieval with MaxScore pruning (Turtle & Flood): once the heap is full,
// query terms whose summed highest possible scores stay below the weakest kept hit cannot bring a
// new document in on their own, so their postings are only probed for candidates found through
// the other terms. Scores are computed exactly as in the exhaustive path, so results are identical.

import type { TopHitsHeap } from './top-hits-heap.js';

const f32 = Math.fround;
// Keeps the pruning bound an upper bound even if its double sums were ever rounded down.
const BOUND_SLACK = 1 + 2 ** -40;
const NO_DOC = 0x7fffffff;

/** One term's postings, in ascending document order. */
export interface TermPostings {
  docs: Int32Array;
  /** Per posting: float32 (1 + freq * normInverse[norm]), the denominator of Lucene's BM25. */
  denominators: Float32Array;
}

export interface WeightedTerm {
  termId: number;
  /** float32 boost × idf. */
  weight: number;
  /** The term's largest denominator, which gives its highest possible score. */
  maxDenominator: number;
  postings: TermPostings;
}

/** Lucene 8 BM25 term score: weight - weight / (1 + freq * normInverse), in float32. */
export function bm25TermScore(weight: number, denominator: number): number {
  return f32(weight - f32(weight / denominator));
}

/** First position in [from, end) whose document is >= target (galloping search). */
function advance(docs: Int32Array, from: number, end: number, target: number): number {
  if (from >= end || (docs[from] as number) >= target) return from;
  let low = from;
  let step = 1;
  let high = from + 1;
  while (high < end && (docs[high] as number) < target) {
    low = high;
    step *= 2;
    high = from + step;
  }
  if (high > end) high = end;
  // docs[low] < target, and docs[high] >= target or high === end.
  while (low + 1 < high) {
    const middle = (low + high) >>> 1;
    if ((docs[middle] as number) < target) low = middle;
    else high = middle;
  }
  return high;
}

export function collectTopHitsWithMaxScore(
  terms: readonly WeightedTerm[],
  heap: TopHitsHeap,
): void {
  const ordered = terms
    .map((term) => ({ ...term, bound: bm25TermScore(term.weight, term.maxDenominator) }))
    .sort((a, b) => a.bound - b.bound);
  const count = ordered.length;
  const weight = new Float64Array(count);
  const cursor = new Int32Array(count);
  const end = new Int32Array(count);
  const docsOf: Int32Array[] = [];
  const denominatorsOf: Float32Array[] = [];
  /** boundUpTo[i]: highest possible score from terms 0..i together. */
  const boundUpTo = new Float64Array(count);
  let boundSum = 0;
  ordered.forEach((term, i) => {
    weight[i] = term.weight;
    end[i] = term.postings.docs.length;
    docsOf.push(term.postings.docs);
    denominatorsOf.push(term.postings.denominators);
    boundSum += term.bound;
    boundUpTo[i] = boundSum * BOUND_SLACK;
  });

  // Terms below firstEssential are non-essential: only probed, never a source of candidates.
  let firstEssential = 0;
  let threshold = Number.NEGATIVE_INFINITY;
  while (firstEssential < count) {
    let doc = NO_DOC;
    for (let i = firstEssential; i < count; i++) {
      const position = cursor[i] as number;
      if (position < (end[i] as number)) {
        const candidate = (docsOf[i] as Int32Array)[position] as number;
        if (candidate < doc) doc = candidate;
      }
    }
    if (doc === NO_DOC) break;

    let score = 0;
    for (let i = firstEssential; i < count; i++) {
      const position = cursor[i] as number;
      if (position < (end[i] as number) && (docsOf[i] as Int32Array)[position] === doc) {
        score += bm25TermScore(
          weight[i] as number,
          (denominatorsOf[i] as Float32Array)[position] as number,
        );
        cursor[i] = position + 1;
      }
    }
    let competitive = true;
    for (let i = firstEssential - 1; i >= 0; i--) {
      if (f32((score + (boundUpTo[i] as number)) * BOUND_SLACK) < threshold) {
        competitive = false;
        break;
      }
      const docs = docsOf[i] as Int32Array;
      const position = advance(docs, cursor[i] as number, end[i] as number, doc);
      cursor[i] = position;
      if (position < (end[i] as number) && docs[position] === doc) {
        score += bm25TermScore(
          weight[i] as number,
          (denominatorsOf[i] as Float32Array)[position] as number,
        );
        cursor[i] = position + 1;
      }
    }
    if (!competitive) continue;

    heap.offer(doc, f32(score));
    if (heap.full) {
      threshold = heap.threshold;
      while (firstEssential < count && f32(boundUpTo[firstEssential] as number) < threshold)
        firstEssential++;
    }
  }
}
