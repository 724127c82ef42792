// Typed readers for the parity fixtures in ../shared/webshop/fixtures, used by this module's tests.

import { readFileSync } from 'node:fs';
import type {
  RawProductSearchFields,
  SearchContentsSource,
} from '../src/search/search-contents.js';

const FIXTURES_DIR = new URL('../../../../shared/webshop/fixtures/', import.meta.url);

interface Bm25FixtureHit {
  docid: number;
  id: string;
  score: number;
  score_f32: number;
}

interface Bm25FixtureQuery {
  id: string;
  kind: 'instruction' | 'keywords' | 'unusual' | 'absent';
  query: string;
  analyzed_terms: string[];
  clauses: Array<{ term: string; boost: number; df: number }>;
  total_matches: number;
  tie_at_cutoff: boolean;
  ties_matter: boolean;
  hits: Bm25FixtureHit[];
}

export interface Bm25Fixture {
  analyzer: { stopwords: string[] };
  similarity: { k1: number; b: number };
  index_stats: {
    max_doc: number;
    doc_count: number;
    sum_total_term_freq: number;
    sum_doc_freq: number;
    avgdl_f32: number;
  };
  norm_length_table: number[];
  products_file: string;
  documents: Array<{ docid: number; id: string; contents: string; length: number; norm: number }>;
  token_samples: Array<{ docid: number; id: string; tokens: string[] }>;
  surface_terms: Array<{ surface: string; terms: string[] }>;
  explanations: Array<{ query_id: string; docid: number; id: string; lucene_explain: string }>;
  queries: Bm25FixtureQuery[];
}

export interface EnvEpisodesFixtureMode {
  products: Array<SearchContentsSource & { asin: string }>;
  search_documents: Array<{ id: string; contents: string }>;
}

function readFixture<T>(relativePath: string): T {
  return JSON.parse(readFileSync(new URL(relativePath, FIXTURES_DIR), 'utf8')) as T;
}

let bm25Fixture: Bm25Fixture | undefined;

export function loadBm25Fixture(): Bm25Fixture {
  bm25Fixture ??= readFixture<Bm25Fixture>('search_bm25.json');
  return bm25Fixture;
}

export function loadBm25FixtureProducts(): RawProductSearchFields[] {
  return readFixture<RawProductSearchFields[]>(loadBm25Fixture().products_file);
}

export function loadEnvEpisodesFixture(): {
  human: EnvEpisodesFixtureMode;
  synthetic: EnvEpisodesFixtureMode;
} {
  return readFixture('env_episodes.json');
}
