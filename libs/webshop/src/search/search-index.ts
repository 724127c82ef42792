// In-memory BM25 index that ranks exactly like WebShop's pyserini index (Lucene 8 BM25Similarity,
// k1 0.9, b 0.4, one-byte length norms, float32 arithmetic, ties by asin). Postings live in flat
// typed arrays: per term a slice of doc ids and of precomputed BM25 denominators.

import { analyzeText, analyzeToken } from './english-analyzer.js';
import { GrowableInt32Array, GrowableUint8Array } from './growable-arrays.js';
import { encodeLengthNorm, LENGTH_NORM_TABLE } from './length-norm.js';
import {
  bm25TermScore,
  collectTopHitsWithMaxScore,
  type TermPostings,
  type WeightedTerm,
} from './max-score-search.js';
import { StandardTokenizer } from './standard-tokenizer.js';
import { TokenTermCache, UNCACHED } from './token-term-cache.js';
import { TopHitsHeap } from './top-hits-heap.js';

const BM25_K1 = 0.9;
const BM25_B = 0.4;
/** WebShop asks the search engine for 50 hits (SEARCH_RETURN_N). */
const SEARCH_TOP_K = 50;

export interface SearchDocument {
  asin: string;
  contents: string;
}

interface SearchHit {
  asin: string;
  /** Lucene's float32 score. */
  score: number;
}

interface SearchResult {
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

/**
 * What a BM25 index reads at query time: held in memory after `buildSearchIndex`, or read from a
 * snapshot file (search-snapshot.ts). Both feed the same scoring code, so they rank identically.
 */
export interface SearchIndexData {
  readonly stats: SearchIndexStats;
  /** Document → its rank in asin (UTF-8) order: the tie-break of equal scores. */
  readonly asinRank: Int32Array;
  readonly norms: Uint8Array;
  termId(term: string): number | undefined;
  idf(termId: number): number;
  maxDenominator(termId: number): number;
  postings(termId: number): TermPostings;
  asin(doc: number): string;
}

class Bm25SearchIndex implements SearchIndex {
  private accumulator: Float64Array | null = null;
  private touchedDocs: Int32Array | null = null;

  constructor(private readonly data: SearchIndexData) {}

  get stats(): SearchIndexStats {
    return this.data.stats;
  }

  lengthNorm(documentPosition: number): number {
    const norm = this.data.norms[documentPosition];
    if (norm === undefined) throw new RangeError(`no document at position ${documentPosition}`);
    return norm;
  }

  /** Anserini's bag of words: one clause per distinct term, boosted by its count in the query. */
  private weightedTerms(query: string): WeightedTerm[] {
    const boosts = new Map<string, number>();
    for (const term of analyzeText(query)) boosts.set(term, (boosts.get(term) ?? 0) + 1);
    const terms: WeightedTerm[] = [];
    for (const [term, boost] of boosts) {
      const termId = this.data.termId(term);
      if (termId === undefined) continue;
      terms.push({
        termId,
        weight: f32(boost * this.data.idf(termId)),
        maxDenominator: this.data.maxDenominator(termId),
        postings: this.data.postings(termId),
      });
    }
    return terms;
  }

  private toHits(heap: TopHitsHeap): SearchHit[] {
    return heap.drain().map(({ doc, score }) => ({ asin: this.data.asin(doc), score }));
  }

  search(query: string, topK = SEARCH_TOP_K): SearchHit[] {
    const capacity = Math.max(0, Math.min(topK, this.stats.documentCount));
    if (capacity === 0) return [];
    const terms = this.weightedTerms(query);
    if (terms.length === 0) return [];
    const heap = new TopHitsHeap(capacity, this.data.asinRank);
    collectTopHitsWithMaxScore(terms, heap);
    return this.toHits(heap);
  }

  /** Scores every matching document (term at a time) to count them; slower than `search`. */
  searchWithTotal(query: string, topK = SEARCH_TOP_K): SearchResult {
    // Allocated on first use: workers only call `search`.
    const accumulator = (this.accumulator ??= new Float64Array(this.stats.documentCount));
    const touched = (this.touchedDocs ??= new Int32Array(this.stats.documentCount));
    let touchedCount = 0;
    for (const { weight, postings } of this.weightedTerms(query)) {
      const { docs, denominators } = postings;
      for (let p = 0; p < docs.length; p++) {
        const doc = docs[p] as number;
        const before = accumulator[doc] as number;
        if (before === 0) touched[touchedCount++] = doc;
        accumulator[doc] = before + bm25TermScore(weight, denominators[p] as number);
      }
    }
    const heap = new TopHitsHeap(Math.max(0, Math.min(topK, touchedCount)), this.data.asinRank);
    for (let t = 0; t < touchedCount; t++) {
      const doc = touched[t] as number;
      heap.offer(doc, f32(accumulator[doc] as number));
      accumulator[doc] = 0;
    }
    return { hits: this.toHits(heap), totalMatches: touchedCount };
  }
}

/** An index over its data (built in memory, or opened from a snapshot). */
export function searchIndexOver(data: SearchIndexData): SearchIndex {
  return new Bm25SearchIndex(data);
}

const FREQ_OVERFLOW = 255;
// The token → term cache only saves re-analysis; bounding it keeps catalogues full of one-off
// tokens (model numbers, sizes) from growing it without limit.
const SURFACE_CACHE_LIMIT = 1 << 21;

/** A finished index as flat arrays: what the in-memory index reads and a snapshot stores. */
export interface SearchIndexParts {
  readonly stats: SearchIndexStats;
  /** Document (Lucene docid) → asin. */
  readonly asins: readonly string[];
  readonly asinRank: Int32Array;
  readonly norms: Uint8Array;
  /** Term id → term. */
  readonly terms: readonly string[];
  readonly idf: Float32Array;
  readonly maxDenominator: Float32Array;
  /** Term t's postings are at [postingStart[t], postingStart[t + 1]). */
  readonly postingStart: Int32Array;
  readonly postingDocs: Int32Array;
  readonly postingDenominators: Float32Array;
}

/**
 * Indexes documents one at a time in the order they are added (document position = Lucene docid).
 * Only their distinct (term, frequency) pairs are kept until the postings are laid out, so the
 * input can be a stream of any length.
 */
export class SearchIndexBuilder {
  private readonly tokenizer = new StandardTokenizer();
  private readonly tokenTerms = new TokenTermCache(SURFACE_CACHE_LIMIT);
  private readonly termIds = new Map<string, number>();
  private readonly docFreq = new GrowableInt32Array(1 << 16);
  private freqScratch = new Int32Array(1 << 16);
  private touchedTerms = new Int32Array(1024);
  private readonly asins: string[] = [];
  private readonly norms = new GrowableUint8Array(1 << 16);
  private readonly pairTerms = new GrowableInt32Array(1 << 20);
  private readonly pairFreqs = new GrowableUint8Array(1 << 20);
  private readonly largeFreqs = new Map<number, number>();
  private readonly docPairEnd = new GrowableInt32Array(1 << 16);
  private documentsWithTerms = 0;
  private sumTotalTermFreq = 0;

  get documentCount(): number {
    return this.asins.length;
  }

  private termIdForSurface(surface: string): number {
    const term = analyzeToken(surface);
    let termId = -1;
    if (term !== null) {
      const known = this.termIds.get(term);
      if (known === undefined) {
        termId = this.termIds.size;
        this.termIds.set(term, termId);
        this.docFreq.push(0);
        if (termId >= this.freqScratch.length) {
          const grown = new Int32Array(this.freqScratch.length * 2);
          grown.set(this.freqScratch);
          this.freqScratch = grown;
        }
      } else {
        termId = known;
      }
    }
    this.tokenTerms.add(surface, termId);
    return termId;
  }

  add({ asin, contents }: SearchDocument): void {
    const tokenCount = this.tokenizer.tokenize(contents);
    const { starts, ends } = this.tokenizer;
    if (tokenCount > this.touchedTerms.length) this.touchedTerms = new Int32Array(tokenCount * 2);
    const touchedTerms = this.touchedTerms;
    let distinct = 0;
    let length = 0;
    for (let t = 0; t < tokenCount; t++) {
      const start = starts[t] as number;
      const end = ends[t] as number;
      let termId = this.tokenTerms.find(contents, start, end);
      if (termId === UNCACHED) termId = this.termIdForSurface(contents.slice(start, end));
      if (termId < 0) continue;
      length++;
      const freq = this.freqScratch[termId] ?? 0;
      if (freq === 0) touchedTerms[distinct++] = termId;
      this.freqScratch[termId] = freq + 1;
    }
    for (let i = 0; i < distinct; i++) {
      const termId = touchedTerms[i] ?? 0;
      const freq = this.freqScratch[termId] ?? 0;
      this.freqScratch[termId] = 0;
      if (freq >= FREQ_OVERFLOW) this.largeFreqs.set(this.pairTerms.length, freq);
      this.pairTerms.push(termId);
      this.pairFreqs.push(Math.min(freq, FREQ_OVERFLOW));
      this.docFreq.data[termId] = (this.docFreq.data[termId] ?? 0) + 1;
    }
    this.docPairEnd.push(this.pairTerms.length);
    this.norms.push(encodeLengthNorm(length));
    this.asins.push(asin);
    if (length > 0) this.documentsWithTerms++;
    this.sumTotalTermFreq += length;
  }

  /** Lays out the postings; call once, after the last document. */
  finish(): SearchIndexParts {
    this.tokenTerms.clear();
    const { asins, documentsWithTerms, sumTotalTermFreq } = this;
    const documentCount = asins.length;
    const termCount = this.termIds.size;
    const averageLength = documentsWithTerms === 0 ? 1 : f32(sumTotalTermFreq / documentsWithTerms);

    const idf = new Float32Array(termCount);
    const postingStart = new Int32Array(termCount + 1);
    for (let termId = 0; termId < termCount; termId++) {
      const df = this.docFreq.data[termId] ?? 0;
      idf[termId] = inverseDocumentFrequency(df, documentsWithTerms);
      postingStart[termId + 1] = (postingStart[termId] ?? 0) + df;
    }

    const postingCount = this.pairTerms.length;
    const postingDocs = new Int32Array(postingCount);
    const postingDenominators = new Float32Array(postingCount);
    const maxDenominator = new Float32Array(termCount);
    const normInverse = bm25NormInverseTable(averageLength);
    const cursor = postingStart.slice(0, termCount);
    const normBytes = this.norms.data;
    const pairTerms = this.pairTerms.data;
    const pairFreqs = this.pairFreqs.data;
    let pair = 0;
    for (let doc = 0; doc < documentCount; doc++) {
      const end = this.docPairEnd.data[doc] ?? 0;
      const inverse = normInverse[normBytes[doc] ?? 0] ?? 0;
      for (; pair < end; pair++) {
        const termId = pairTerms[pair] ?? 0;
        let freq = pairFreqs[pair] ?? 0;
        if (freq === FREQ_OVERFLOW) freq = this.largeFreqs.get(pair) ?? freq;
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
    const terms = new Array<string>(termCount);
    for (const [term, termId] of this.termIds) terms[termId] = term;

    return {
      stats: {
        documentCount,
        documentsWithTerms,
        sumTotalTermFreq,
        averageLength,
        termCount,
        postingCount,
      },
      asins,
      asinRank,
      norms: this.norms.toArray(),
      terms,
      idf,
      maxDenominator,
      postingStart,
      postingDocs,
      postingDenominators,
    };
  }
}

/** The in-memory data of built parts: postings are views into the flat arrays. */
export function searchIndexDataFromParts(parts: SearchIndexParts): SearchIndexData {
  const termIds = new Map(parts.terms.map((term, termId) => [term, termId]));
  const { postingStart, postingDocs, postingDenominators } = parts;
  return {
    stats: parts.stats,
    asinRank: parts.asinRank,
    norms: parts.norms,
    termId: (term) => termIds.get(term),
    idf: (termId) => parts.idf[termId] as number,
    maxDenominator: (termId) => parts.maxDenominator[termId] as number,
    postings: (termId) => {
      const start = postingStart[termId] as number;
      const end = postingStart[termId + 1] as number;
      return {
        docs: postingDocs.subarray(start, end),
        denominators: postingDenominators.subarray(start, end),
      };
    },
    asin: (doc) => parts.asins[doc] as string,
  };
}

/** Indexes documents in iteration order (document position = Lucene docid), in memory. */
export function buildSearchIndex(documents: Iterable<SearchDocument>): SearchIndex {
  const builder = new SearchIndexBuilder();
  for (const document of documents) builder.add(document);
  return searchIndexOver(searchIndexDataFromParts(builder.finish()));
}
