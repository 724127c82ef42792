import { mkdtempSync, readFileSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateDemoCatalog } from '../demo-catalog/index.js';
import { searchDocumentFromRaw } from './search-contents.js';
import { loadBm25Fixture, loadBm25FixtureProducts } from '../../test-support/search-fixtures.js';
import {
  SearchIndexBuilder,
  searchIndexDataFromParts,
  searchIndexOver,
  type SearchIndex,
  type SearchIndexParts,
} from './search-index.js';
import {
  openSearchSnapshot,
  SearchSnapshotError,
  writeSearchSnapshot,
  type OpenedSearchSnapshot,
} from './search-snapshot.js';

const identity = { catalogId: 'fixture', version: 'v1' };
const dir = mkdtempSync(join(tmpdir(), 'search-snapshot-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function partsOf(documents: Iterable<{ asin: string; contents: string }>): SearchIndexParts {
  const builder = new SearchIndexBuilder();
  for (const document of documents) builder.add(document);
  return builder.finish();
}

/** A copy of the snapshot with `damage` applied, opened (or refused) by the caller. */
function damagedCopy(source: string, name: string, damage: (bytes: Buffer) => Buffer): string {
  const path = join(dir, name);
  writeFileSync(path, damage(readFileSync(source)));
  return path;
}

describe('a search index snapshot of the Lucene fixture', () => {
  const fixture = loadBm25Fixture();
  let memory: SearchIndex;
  let path: string;
  let sut: OpenedSearchSnapshot;

  beforeAll(() => {
    const parts = partsOf(loadBm25FixtureProducts().map(searchDocumentFromRaw));
    memory = searchIndexOver(searchIndexDataFromParts(parts));
    path = join(dir, 'fixture.bfidx');
    writeSearchSnapshot(parts, path, identity);
    sut = openSearchSnapshot(path, { expect: identity, postingsCacheBytes: 0 });
  });
  afterAll(() => sut.close());

  it('ranks every fixture query exactly as Lucene and the in-memory index do, match counts included', () => {
    expect(sut.stats).toEqual(memory.stats);
    for (const query of fixture.queries) {
      const expected = query.hits.map((hit) => ({ asin: hit.id, score: hit.score_f32 }));
      expect(sut.searchWithTotal(query.query, 50).hits, query.id).toEqual(expected);
      expect(sut.searchWithTotal(query.query, 50).totalMatches, query.id).toBe(query.total_matches);
      expect(sut.search(query.query, 50), query.id).toEqual(memory.search(query.query, 50));
    }
    fixture.documents.forEach((doc) => expect(sut.lengthNorm(doc.docid)).toBe(doc.norm));
  });

  it('finds each document by asin, in catalog order', () => {
    const products = loadBm25FixtureProducts();
    products.forEach((product, doc) => {
      expect(sut.documentOf(String(product.asin))).toBe(doc);
      expect(sut.asinAt(doc)).toBe(String(product.asin));
    });
    expect(sut.documentOf('NOT-AN-ASIN')).toBe(-1);
  });

  it('refuses a snapshot of another catalog version as stale', () => {
    expect(() =>
      openSearchSnapshot(path, { expect: { catalogId: 'fixture', version: 'v2' } }),
    ).toThrow(/version v1, not fixture version v2: it is stale/);
  });

  it('refuses a truncated snapshot at open, wherever it was cut', () => {
    for (const keep of [0, 10, 200, 5_000]) {
      const cut = damagedCopy(path, `cut-${keep}.bfidx`, (bytes) => bytes.subarray(0, keep));
      expect(() => openSearchSnapshot(cut), `cut at ${keep}`).toThrow(SearchSnapshotError);
    }
    const lastByteGone = damagedCopy(path, 'cut-end.bfidx', (bytes) => bytes);
    truncateSync(lastByteGone, readFileSync(path).length - 1);
    expect(() => openSearchSnapshot(lastByteGone)).toThrow(/truncated or damaged/);
  });

  it('refuses a damaged header or table at open', () => {
    const header = damagedCopy(path, 'header.bfidx', (bytes) => {
      const copy = Buffer.from(bytes);
      copy[20] = (copy[20] as number) ^ 0x01;
      return copy;
    });
    expect(() => openSearchSnapshot(header)).toThrow(/damaged header/);
    const magic = damagedCopy(path, 'magic.bfidx', (bytes) =>
      Buffer.concat([Buffer.from('NOTANIDX'), bytes.subarray(8)]),
    );
    expect(() => openSearchSnapshot(magic)).toThrow(/not a search index snapshot/);
  });

  it('refuses to rank from a damaged posting list: the query fails, no wrong hits come back', () => {
    const size = readFileSync(path).length;
    // Flip one bit at a few places in the back half of the file: the postings section.
    const damaged = damagedCopy(path, 'postings.bfidx', (bytes) => {
      const copy = Buffer.from(bytes);
      for (const fraction of [0.55, 0.7, 0.85]) {
        const at = Math.floor(size * fraction);
        copy[at] = (copy[at] as number) ^ 0x10;
      }
      return copy;
    });
    const opened = openSearchSnapshot(damaged, { postingsCacheBytes: 0 });
    try {
      let refused = 0;
      for (const query of fixture.queries) {
        try {
          expect(opened.search(query.query, 50)).toEqual(memory.search(query.query, 50));
        } catch (error) {
          expect(error).toBeInstanceOf(SearchSnapshotError);
          expect((error as Error).message).toMatch(/postings of term #\d+ fail their checksum/);
          refused++;
        }
      }
      expect(refused).toBeGreaterThan(0);
    } finally {
      opened.close();
    }
  });
});

describe('a snapshot of a generated catalog', () => {
  it('ranks like the in-memory index, through its postings cache too', () => {
    const catalog = generateDemoCatalog({ products: 2_000, seed: 5 });
    const parts = partsOf(catalog.items.map(searchDocumentFromRaw));
    const memory = searchIndexOver(searchIndexDataFromParts(parts));
    const path = join(dir, 'demo.bfidx');
    writeSearchSnapshot(parts, path, { catalogId: 'demo', version: 'x' });
    const sut = openSearchSnapshot(path, { postingsCacheBytes: 1 << 16 });
    try {
      const queries = Object.values(catalog.humanInstructions).flatMap((list) =>
        list.map((entry) => entry.instruction),
      );
      expect(queries.length).toBeGreaterThan(100);
      for (const query of [...queries, ...queries])
        expect(sut.search(query, 50), query).toEqual(memory.search(query, 50));
    } finally {
      sut.close();
    }
  });
});
