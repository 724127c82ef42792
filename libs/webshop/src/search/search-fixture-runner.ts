import { readFileSync } from 'node:fs';
import { isAbsolute, join } from 'node:path';
import type { FixtureCaseResult, FixtureRunner } from '../reward/index.js';
import { analyzeText } from './english-analyzer.js';
import { buildSearchContentsFromRaw, type RawProductSearchFields } from './search-contents.js';
import { buildSearchIndex } from './search-index.js';

interface Bm25FixtureFile {
  products_file: string;
  documents: Array<{ id: string; contents: string; norm: number }>;
  token_samples: Array<{ id: string; tokens: string[] }>;
  queries: Array<{
    id: string;
    query: string;
    analyzed_terms: string[];
    total_matches: number;
    hits: Array<{ id: string; score_f32: number }>;
  }>;
}

function isBm25Fixture(json: unknown): json is Bm25FixtureFile {
  if (typeof json !== 'object' || json === null) return false;
  const value = json as Record<string, unknown>;
  return (
    typeof value.products_file === 'string' &&
    Array.isArray(value.queries) &&
    Array.isArray(value.documents) &&
    Array.isArray(value.token_samples)
  );
}

function resolveProducts(productsFile: string, fixtureDir: string): string {
  return isAbsolute(productsFile) ? productsFile : join(fixtureDir, productsFile);
}

/**
 * Real Lucene rankings (search_bm25.json): the products file it names is indexed, then every
 * document's contents, token sample and query must come out as Lucene had them.
 */
export const searchBm25FixtureRunner: FixtureRunner = {
  name: 'search-bm25',
  matches: isBm25Fixture,
  run(json, context) {
    const fixture = json as Bm25FixtureFile;
    const results: FixtureCaseResult[] = [];
    const products = JSON.parse(
      readFileSync(resolveProducts(fixture.products_file, context.fixtureDir), 'utf8'),
    ) as RawProductSearchFields[];
    const documents = products.map((raw) => ({
      asin: String(raw.asin),
      contents: buildSearchContentsFromRaw(raw),
    }));
    const contentsById = new Map(documents.map((doc) => [doc.asin, doc.contents]));
    for (const expected of fixture.documents) {
      const actual = contentsById.get(expected.id);
      results.push(
        actual === expected.contents
          ? { case: `contents ${expected.id}`, passed: true }
          : {
              case: `contents ${expected.id}`,
              passed: false,
              message: `search contents differ: ${JSON.stringify(actual?.slice(0, 80))}…`,
            },
      );
    }
    for (const sample of fixture.token_samples) {
      const tokens = analyzeText(contentsById.get(sample.id) ?? '');
      const same =
        tokens.length === sample.tokens.length &&
        tokens.every((token, i) => token === sample.tokens[i]);
      results.push(
        same
          ? { case: `tokens ${sample.id}`, passed: true }
          : { case: `tokens ${sample.id}`, passed: false, message: 'analyzer tokens differ' },
      );
    }
    const index = buildSearchIndex(documents);
    for (const query of fixture.queries) {
      const name = `query ${query.id} ${JSON.stringify(query.query).slice(0, 60)}`;
      const terms = analyzeText(query.query);
      const { hits, totalMatches } = index.searchWithTotal(query.query, query.hits.length);
      const problems: string[] = [];
      if (JSON.stringify(terms) !== JSON.stringify(query.analyzed_terms))
        problems.push(`terms ${JSON.stringify(terms)} ≠ ${JSON.stringify(query.analyzed_terms)}`);
      if (totalMatches !== query.total_matches)
        problems.push(`${totalMatches} matches, Lucene ${query.total_matches}`);
      query.hits.forEach((hit, rank) => {
        const got = hits[rank];
        if (!got || got.asin !== hit.id || Math.fround(got.score) !== Math.fround(hit.score_f32)) {
          if (problems.length < 4)
            problems.push(
              `rank ${rank + 1}: ${got ? `${got.asin} ${got.score}` : 'nothing'} ≠ ${hit.id} ${hit.score_f32}`,
            );
        }
      });
      if (hits.length !== query.hits.length)
        problems.push(`${hits.length} hits, Lucene ${query.hits.length}`);
      results.push(
        problems.length === 0
          ? { case: name, passed: true }
          : { case: name, passed: false, message: problems.join('; ') },
      );
    }
    return results;
  },
};
