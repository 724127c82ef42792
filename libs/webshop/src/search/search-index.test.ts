import { beforeAll, describe, expect, it } from 'vitest';
import { LENGTH_NORM_TABLE } from './length-norm.js';
import { searchDocumentFromRaw } from './search-contents.js';
import { loadBm25Fixture, loadBm25FixtureProducts } from '../../test-support/search-fixtures.js';
import {
  bm25NormInverseTable,
  buildSearchIndex,
  compareUtf8,
  inverseDocumentFrequency,
  type SearchIndex,
} from './search-index.js';

const fixture = loadBm25Fixture();
const f32 = Math.fround;

describe('buildSearchIndex over the Lucene fixture', () => {
  let sut: SearchIndex;

  beforeAll(() => {
    sut = buildSearchIndex(loadBm25FixtureProducts().map(searchDocumentFromRaw));
  });

  it('has Lucene’s index statistics', () => {
    expect(sut.stats).toMatchObject({
      documentCount: fixture.index_stats.max_doc,
      documentsWithTerms: fixture.index_stats.doc_count,
      sumTotalTermFreq: fixture.index_stats.sum_total_term_freq,
      postingCount: fixture.index_stats.sum_doc_freq,
      averageLength: fixture.index_stats.avgdl_f32,
    });
    fixture.documents.forEach((doc) => expect(sut.lengthNorm(doc.docid)).toBe(doc.norm));
  });

  // score_f32 is written so that it parses to exactly Lucene's float32 score: compare with ===.
  it('returns Lucene’s hits, order, float32 scores and match counts for all 300 queries', () => {
    expect(fixture.queries).toHaveLength(300);
    let exact = 0;
    for (const query of fixture.queries) {
      const result = sut.searchWithTotal(query.query, 50);
      const expected = query.hits.map((hit) => ({ asin: hit.id, score: hit.score_f32 }));
      expect(result.hits, `${query.id} ${JSON.stringify(query.query)}`).toEqual(expected);
      expect(result.totalMatches, query.id).toBe(query.total_matches);
      for (const hit of result.hits) expect(f32(hit.score)).toBe(hit.score);
      exact++;
    }
    expect(exact).toBe(300);
  });

  it('breaks ties by asin, which decides the top 50 of the tie-sensitive queries', () => {
    const tieSensitive = fixture.queries.filter((query) => query.ties_matter);
    expect(tieSensitive.length).toBeGreaterThan(100);
    for (const query of tieSensitive) {
      expect(sut.search(query.query).map((hit) => hit.asin)).toEqual(
        query.hits.map((hit) => hit.id),
      );
    }
  });

  it('reproduces every number of Lucene’s explanations', () => {
    const normInverse = bm25NormInverseTable(sut.stats.averageLength);
    for (const explanation of fixture.explanations) {
      const query = fixture.queries.find((q) => q.id === explanation.query_id);
      const hit = sut.search(query?.query ?? '').find((h) => h.asin === explanation.id);
      const lines = explanation.lucene_explain.split('\n');
      expect(hit?.score).toBe(f32(Number(lines[0]?.split(' = ')[0])));

      const norm = sut.lengthNorm(explanation.docid);
      const blocks = explanation.lucene_explain.split(/\n(?= {2}\S)/).slice(1);
      expect(blocks.length).toBeGreaterThan(0);
      for (const block of blocks) {
        const value = (label: string): number => {
          const match = new RegExp(`([\\d.E-]+) = ${label}`).exec(block);
          if (!match?.[1]) return Number.NaN;
          return f32(Number(match[1]));
        };
        const termScore = f32(Number(block.trim().split(' = ')[0]));
        const boost = Number.isNaN(value('boost')) ? 1 : value('boost');
        const idf = value('idf');
        const freq = value('freq,');
        expect(idf).toBe(inverseDocumentFrequency(value('n,'), value('N,')));
        expect(value('dl,')).toBe(LENGTH_NORM_TABLE[norm]);
        expect(value('avgdl,')).toBe(sut.stats.averageLength);
        const weight = f32(boost * idf);
        const denominator = f32(1 + f32(freq * (normInverse[norm] ?? 0)));
        expect(f32(weight - f32(weight / denominator))).toBe(termScore);
      }
    }
  });

  it('returns nothing for queries without indexed terms and honours topK', () => {
    expect(sut.search('')).toEqual([]);
    expect(sut.search('to be or not to be')).toEqual([]);
    expect(sut.search('zzzyzzx qqqxq')).toEqual([]);
    const first = fixture.queries.find((query) => query.hits.length === 50);
    expect(sut.search(first?.query ?? '', 7)).toEqual(sut.search(first?.query ?? '').slice(0, 7));
    expect(sut.search(first?.query ?? '', 0)).toEqual([]);
  });
});

describe('buildSearchIndex edge cases', () => {
  it('searches an empty index and documents without terms', () => {
    expect(buildSearchIndex([]).search('shoes')).toEqual([]);
    const sut = buildSearchIndex([
      { asin: 'B2', contents: '-' },
      { asin: 'B1', contents: 'red shoes' },
      { asin: 'B0', contents: 'red shoes' },
    ]);
    expect(sut.stats).toMatchObject({ documentCount: 3, documentsWithTerms: 2 });
    expect(sut.search('red shoe', 100).map((hit) => hit.asin)).toEqual(['B0', 'B1']);
    expect(sut.searchWithTotal('red shoe', 1)).toEqual({
      hits: sut.search('red shoe', 1),
      totalMatches: 2,
    });
  });
});

describe('compareUtf8', () => {
  it('orders by UTF-8 bytes, placing supplementary characters after U+FFFF', () => {
    expect(compareUtf8('B01', 'B02')).toBeLessThan(0);
    expect(compareUtf8('B0', 'B01')).toBeLessThan(0);
    expect(compareUtf8('\uffff', '\u{10000}')).toBeLessThan(0);
    expect(compareUtf8('\u{10000}', '\ue000')).toBeGreaterThan(0);
  });
});
