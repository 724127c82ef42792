// In-memory BM25 index that ranks exactly like WebShop's pyserini index (Lucene 8 BM25Similarity,
// k1 0.9, b 0.4, one-byte length norms, float32 arithmetic, ties by asin). Postings live in flat
// typed arrays: per term a slice of doc ids and of precomputed BM25 denominators.

import { analyzeText, analyzeToken } from './english-analyzer.js';
import { GrowableInt32Array, GrowableUint8Array } from './growable-arrays.js';
import { encodeLengthNorm, LENGTH_NORM_TABLE } from './length-norm.js';
import { bm25TermScore, collectTopHitsWithMaxScore, type PostingLists, type WeightedTerm } from './max-score-search.js';
import { StandardTokenizer } from './standard-tokenizer.js';
import { TokenTermCache, UNCACHED } from './token-term-cache.js';
import { TopHitsHeap } from './top-hits-heap.js';

export const BM25_K1 = 0.9;
export const BM25_B = 0.4;
/** WebShop asks the search engine for 50 hits (SEARCH_RETURN_N). */
export const SEARCH_TOP_K = 50;

export interface SearchDocument {
  asin: string;
  contents: string;
}

export interface SearchHit {
  asin: string;
  /** Lucene's float32 score. */
  score: number;
}

export interface SearchResult {
  hits: SearchHit[];
  /** Documents matching at least one query term. */
  totalMatches: number;
}

export interface SearchIndexStats {
  /** Documents indexed (Lucene maxDoc). */
  documentCount: number;
  /** Documents with at least one indexed term: BM25's N (Lucene docCount). */
  documentsWithTerms: number;
  sumTotalTermFreq: number;
  /** Average field length as the float32 BM25 uses. */
  averageLength: number;
  termCount: number;
  postingCount: number;
}

export interface SearchIndex {
  readonly stats: SearchIndexStats;
  /** Top hits by score descending, ties by asin ascending (Anserini's sort). */
  search(query: string, topK?: number): SearchHit[];
  searchWithTotal(query: string, topK?: number): SearchResult;
  /** The one-byte length norm stored for the document at this position of the input. */
  lengthNorm(documentPosition: number): number;
}

const f32 = Math.fround;

/** Orders strings by their UTF-8 bytes (what Lucene's sorted doc values compare). */
export function compareUtf8(a: string, b: string): number {
  if (a === b) return 0;
  const length = Math.min(a.length, b.length);
  for (let i = 0; i < length; i++) {
    let ca = a.charCodeAt(i);
    let cb = b.charCodeAt(i);
    if (ca === cb) continue;
    // Surrogates (supplementary code points) come after U+E000..U+FFFF in UTF-8 byte order.
    if (ca >= 0xd800) ca += ca < 0xe000 ? 0x2000 : -0x800;
    if (cb >= 0xd800) cb += cb < 0xe000 ? 0x2000 : -0x800;
    return ca - cb;
  }
  return a.length - b.length;
}

/** Lucene's BM25 cache per norm byte: 1 / (k1 * ((1 - b) + b * dl / avgdl)), in float32. */
export function bm25NormInverseTable(averageLength: number): Float32Array {
  const table = new Float32Array(256);
  const oneMinusB = f32(1 - f32(BM25_B));
  for (let norm = 0; norm < 256; norm++) {
    const lengthRatio = f32(f32(f32(BM25_B) * (LENGTH_NORM_TABLE[norm] ?? 0)) / averageLength);
    table[norm] = f32(1 / f32(f32(BM25_K1) * f32(oneMinusB + lengthRatio)));
  }
  return table;
}

export function inverseDocumentFrequency(docFreq: number, documentsWithTerms: number): number {
  return f32(Math.log(1 + (documentsWithTerms - docFreq + 0.5) / (docFreq + 0.5)));
}

class Bm25SearchIndex implements SearchIndex {
  private readonly accumulator: Float64Array;
  private readonly touchedDocs: Int32Array;

  constructor(
    readonly stats: SearchIndexStats,
    private readonly asins: readonly string[],
    private readonly asinRank: Int32Array,
    private readonly norms: Uint8Array,
    private readonly termIds: ReadonlyMap<string, number>,
    private readonly idf: Float32Array,
    private readonly postings: PostingLists,
  ) {
    this.accumulator = new Float64Array(stats.documentCount);
    this.touchedDocs = new Int32Array(stats.documentCount);
  }

  lengthNorm(documentPosition: number): number {
    const norm = this.norms[documentPosition];
    if (norm === undefined) throw new RangeError(`no document at position ${documentPosition}`);
    return norm;
  }

  /** Anserini's bag of words: one clause per distinct term, boosted by its count in the query. */
  private weightedTerms(query: string): WeightedTerm[] {
    const boosts = new Map<string, number>();
    for (const term of analyzeText(query)) boosts.set(term, (boosts.get(term) ?? 0) + 1);
    const terms: WeightedTerm[] = [];
    for (const [term, boost] of boosts) {
      const termId = this.termIds.get(term);
      if (termId !== undefined) terms.push({ termId, weight: f32(boost * (this.idf[termId] as number)) });
    }
    return terms;
  }

  private toHits(heap: TopHitsHeap): SearchHit[] {
    return heap.drain().map(({ doc, score }) => ({ asin: this.asins[doc] as string, score }));
  }

  search(query: string, topK = SEARCH_TOP_K): SearchHit[] {
    const terms = this.weightedTerms(query);
    const capacity = Math.max(0, Math.min(topK, this.stats.documentCount));
    if (terms.length === 0 || capacity === 0) return [];
    const heap = new TopHitsHeap(capacity, this.asinRank);
    collectTopHitsWithMaxScore(this.postings, terms, heap);
    return this.toHits(heap);
  }

  /** Scores every matching document (term at a time) to count them; slower than `search`. */
  searchWithTotal(query: string, topK = SEARCH_TOP_K): SearchResult {
    const accumulator = this.accumulator;
    const touched = this.touchedDocs;
    const { start, docs, denominators } = this.postings;
    let touchedCount = 0;
    for (const { termId, weight } of this.weightedTerms(query)) {
      const end = start[termId + 1] as number;
      for (let p = start[termId] as number; p < end; p++) {
        const doc = docs[p] as number;
        const before = accumulator[doc] as number;
        if (before === 0) touched[touchedCount++] = doc;
        accumulator[doc] = before + bm25TermScore(weight, denominators[p] as number);
      }
    }
    const heap = new TopHitsHeap(Math.max(0, Math.min(topK, touchedCount)), this.asinRank);
    for (let t = 0; t < touchedCount; t++) {
      const doc = touched[t] as number;
      heap.offer(doc, f32(accumulator[doc] as number));
      accumulator[doc] = 0;
    }
    return { hits: this.toHits(heap), totalMatches: touchedCount };
  }
}

const FREQ_OVERFLOW = 255;
// The token → term cache only saves re-analysis; bounding it keeps catalogues full of one-off
// tokens (model numbers, sizes) from growing it without limit.
const SURFACE_CACHE_LIMIT = 1 << 21;

/**
 * Indexes documents in iteration order (document position = Lucene docid). Documents are analysed
 * one at a time and only their distinct (term, frequency) pairs are kept until the postings are laid
 * out, so the input can be a stream.
 */
export function buildSearchIndex(documents: Iterable<SearchDocument>): SearchIndex {
  const tokenizer = new StandardTokenizer();
  const tokenTerms = new TokenTermCache(SURFACE_CACHE_LIMIT);
  const termIds = new Map<string, number>();
  const docFreq = new GrowableInt32Array(1 << 16);
  let freqScratch = new Int32Array(1 << 16);
  let touchedTerms = new Int32Array(1024);

  const asins: string[] = [];
  const norms = new GrowableUint8Array(1 << 16);
  const pairTerms = new GrowableInt32Array(1 << 20);
  const pairFreqs = new GrowableUint8Array(1 << 20);
  const largeFreqs = new Map<number, number>();
  const docPairEnd = new GrowableInt32Array(1 << 16);
  let documentsWithTerms = 0;
  let sumTotalTermFreq = 0;

  const termIdForSurface = (surface: string): number => {
    const term = analyzeToken(surface);
    let termId = -1;
    if (term !== null) {
      const known = termIds.get(term);
      if (known === undefined) {
        termId = termIds.size;
        termIds.set(term, termId);
        docFreq.push(0);
        if (termId >= freqScratch.length) {
          const grown = new Int32Array(freqScratch.length * 2);
          grown.set(freqScratch);
          freqScratch = grown;
        }
      } else {
        termId = known;
      }
    }
    tokenTerms.add(surface, termId);
    return termId;
  };

  for (const { asin, contents } of documents) {
    const tokenCount = tokenizer.tokenize(contents);
    const { starts, ends } = tokenizer;
    if (tokenCount > touchedTerms.length) touchedTerms = new Int32Array(tokenCount * 2);
    let distinct = 0;
    let length = 0;
    for (let t = 0; t < tokenCount; t++) {
      const start = starts[t] as number;
      const end = ends[t] as number;
      let termId = tokenTerms.find(contents, start, end);
      if (termId === UNCACHED) termId = termIdForSurface(contents.slice(start, end));
      if (termId < 0) continue;
      length++;
      const freq = freqScratch[termId] ?? 0;
      if (freq === 0) touchedTerms[distinct++] = termId;
      freqScratch[termId] = freq + 1;
    }
    for (let i = 0; i < distinct; i++) {
      const termId = touchedTerms[i] ?? 0;
      const freq = freqScratch[termId] ?? 0;
      freqScratch[termId] = 0;
      if (freq >= FREQ_OVERFLOW) largeFreqs.set(pairTerms.length, freq);
      pairTerms.push(termId);
      pairFreqs.push(Math.min(freq, FREQ_OVERFLOW));
      docFreq.data[termId] = (docFreq.data[termId] ?? 0) + 1;
    }
    docPairEnd.push(pairTerms.length);
    norms.push(encodeLengthNorm(length));
    asins.push(asin);
    if (length > 0) documentsWithTerms++;
    sumTotalTermFreq += length;
  }
  tokenTerms.clear();

  const documentCount = asins.length;
  const termCount = termIds.size;
  const averageLength = documentsWithTerms === 0 ? 1 : f32(sumTotalTermFreq / documentsWithTerms);

  const idf = new Float32Array(termCount);
  const postingStart = new Int32Array(termCount + 1);
  for (let termId = 0; termId < termCount; termId++) {
    const df = docFreq.data[termId] ?? 0;
    idf[termId] = inverseDocumentFrequency(df, documentsWithTerms);
    postingStart[termId + 1] = (postingStart[termId] ?? 0) + df;
  }

  const postingCount = pairTerms.length;
  const postingDocs = new Int32Array(postingCount);
  const postingDenominators = new Float32Array(postingCount);
  const maxDenominator = new Float32Array(termCount);
  const normInverse = bm25NormInverseTable(averageLength);
  const cursor = postingStart.slice(0, termCount);
  const normBytes = norms.data;
  let pair = 0;
  for (let doc = 0; doc < documentCount; doc++) {
    const end = docPairEnd.data[doc] ?? 0;
    const inverse = normInverse[normBytes[doc] ?? 0] ?? 0;
    for (; pair < end; pair++) {
      const termId = pairTerms.data[pair] ?? 0;
      let freq = pairFreqs.data[pair] ?? 0;
      if (freq === FREQ_OVERFLOW) freq = largeFreqs.get(pair) ?? freq;
      const slot = cursor[termId] ?? 0;
      cursor[termId] = slot + 1;
      postingDocs[slot] = doc;
      const denominator = f32(1 + f32(freq * inverse));
      postingDenominators[slot] = denominator;
      if (denominator > (maxDenominator[termId] as number)) maxDenominator[termId] = denominator;
    }
  }

  const byAsin = Array.from({ length: documentCount }, (_, doc) => doc);
  byAsin.sort((a, b) => compareUtf8(asins[a] ?? '', asins[b] ?? '') || a - b);
  const asinRank = new Int32Array(documentCount);
  byAsin.forEach((doc, rank) => {
    asinRank[doc] = rank;
  });

  const stats: SearchIndexStats = {
    documentCount,
    documentsWithTerms,
    sumTotalTermFreq,
    averageLength,
    termCount,
    postingCount,
  };
  return new Bm25SearchIndex(
    stats,
    asins,
    asinRank,
    norms.toArray(),
    termIds,
    idf,
    { start: postingStart, docs: postingDocs, denominators: postingDenominators, maxDenominator },
  );
}
