import { describe, expect, it } from 'vitest';
import {
  analyzeText,
  analyzeToken,
  ENGLISH_STOPWORDS,
  lowercasePerCodePoint,
} from './english-analyzer.js';
import { loadBm25Fixture } from '../../test-support/search-fixtures.js';
import { standardTokens } from './standard-tokenizer.js';

const fixture = loadBm25Fixture();

describe('analyzeText', () => {
  it('uses Lucene English stopwords', () => {
    expect([...ENGLISH_STOPWORDS].sort()).toEqual([...fixture.analyzer.stopwords].sort());
  });

  it('gives every sampled document the terms Lucene indexed', () => {
    expect(fixture.token_samples).toHaveLength(200);
    for (const sample of fixture.token_samples) {
      const contents = fixture.documents[sample.docid]?.contents ?? '';
      expect(analyzeText(contents), `docid ${sample.docid}`).toEqual(sample.tokens);
    }
  });

  it('analyses every surface token as Lucene does', () => {
    const mismatches = fixture.surface_terms.filter(({ surface, terms }) => {
      const analysed = standardTokens(surface)
        .map(analyzeToken)
        .filter((term) => term !== null);
      return JSON.stringify(analysed) !== JSON.stringify(terms);
    });
    expect(fixture.surface_terms.length).toBeGreaterThan(3000);
    expect(mismatches).toEqual([]);
  });

  it('analyses all 300 queries as Lucene does', () => {
    for (const query of fixture.queries) {
      expect(analyzeText(query.query), query.id).toEqual(query.analyzed_terms);
    }
  });

  it('counts the field length Lucene counts for every document', () => {
    const wrong = fixture.documents.filter(
      (doc) => analyzeText(doc.contents).length !== doc.length,
    );
    expect(wrong.map((doc) => doc.docid)).toEqual([]);
  });

  it('strips possessives before lowercasing and stopping', () => {
    expect(analyzeText("MEN'S men’s kids' it's Ｓ＇s")).toEqual(['men', 'men', 'kid', 'ｓ']);
  });
});

describe('lowercasePerCodePoint', () => {
  it('maps each code point on its own, like Java Character.toLowerCase', () => {
    expect(lowercasePerCodePoint('İSTANBUL')).toBe('istanbul');
    expect(lowercasePerCodePoint('ΟΔΟΣ')).toBe('οδοσ');
    expect(lowercasePerCodePoint('ＳＨＯＥＳ')).toBe('ｓｈｏｅｓ');
  });
});
