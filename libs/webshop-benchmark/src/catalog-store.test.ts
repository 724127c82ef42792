import { randomUUID } from 'node:crypto';
import {
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  truncateSync,
  utimesSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { afterAll, describe, expect, it } from 'vitest';
import { WebshopCatalogRepository } from './webshop-catalog-repository.js';
import type { WebshopTables } from './webshop-tables.js';
import { useTestServices } from '@benchfleet/testing';
import {
  buildSearchContents,
  buildSearchIndex,
  createStoreOver,
  replayEnvEpisodes,
  SearchSnapshotError,
  type CatalogStoreProduct,
  type StoreCatalog,
  type WebshopGoal,
} from '@benchfleet/webshop';
import {
  CatalogSearchSnapshotBuilder,
  openCatalogSearchSnapshot,
  rebuildCatalogSearchSnapshot,
  SearchSnapshotMissingError,
} from './catalog-search-snapshot.js';
import { openStoreFromSnapshot } from './catalog-store-loader.js';
import { PostgresStoreGoals } from './postgres-store-goals.js';
import { PostgresStoreProducts } from './postgres-store-products.js';

const services = useTestServices();
const cacheRoot = mkdtempSync(join(tmpdir(), 'catalog-store-test-'));
afterAll(() => rmSync(cacheRoot, { recursive: true, force: true }));
const freshCache = (): string => mkdtempSync(join(cacheRoot, 'cache-'));

const envEpisodes = JSON.parse(
  readFileSync(
    new URL('../../../../shared/webshop/fixtures/env_episodes.json', import.meta.url),
    'utf8',
  ),
) as unknown;

/** Imports a catalog the way `scheduler webshop import` stores one: products, goals, and its search snapshot. */
async function importCatalog(catalogId: string, catalog: StoreCatalog): Promise<string> {
  const version = randomUUID();
  const snapshot = new CatalogSearchSnapshotBuilder({ catalogId, version });
  let built: Awaited<ReturnType<CatalogSearchSnapshotBuilder['finish']>> | undefined;
  try {
    await new WebshopCatalogRepository(services.db).import(
      { id: catalogId, version, source: { kind: 'test' }, goalSeed: 0 },
      async (writeProducts) => {
        for (const product of catalog.products) snapshot.add(product);
        await writeProducts(
          catalog.products.map((product) => ({
            asin: product.asin,
            price: catalog.productPrices.get(product.asin) ?? 0,
            product: product as unknown as Record<string, unknown>,
          })),
        );
        built = await snapshot.finish();
        const goals = catalog.goals.map((goal, goalIndex) => ({
          goalIndex,
          split: 'test' as const,
          asin: goal.asin,
          instruction: goal.instruction_text,
          goal: goal as unknown as Record<string, unknown>,
        }));
        return { goals, searchSnapshot: built.upload };
      },
    );
  } finally {
    await built?.dispose();
  }
  return version;
}

function fixturePart(name: 'human' | 'synthetic'): StoreCatalog {
  const part = (
    envEpisodes as Record<
      string,
      {
        products: CatalogStoreProduct[];
        product_prices: Record<string, number>;
        goals: WebshopGoal[];
      }
    >
  )[name];
  if (part === undefined) throw new Error(`env_episodes.json has no ${name} part`);
  return {
    products: part.products,
    productPrices: new Map(Object.entries(part.product_prices)),
    goals: part.goals,
  };
}

describe('a store whose products and goals come from Postgres on demand', () => {
  it('replays every env_episodes.json episode with the same pages, observations and rewards as the in-memory store', async () => {
    const inMemory = await replayEnvEpisodes(envEpisodes);
    const cacheDir = freshCache();
    const sut = await replayEnvEpisodes(envEpisodes, async (partName, catalog, options) => {
      const catalogId = `fixture-${partName}`;
      if (!(await new WebshopCatalogRepository(services.db).get(catalogId)))
        await importCatalog(catalogId, catalog);
      const { snapshot } = await openCatalogSearchSnapshot(services.db, catalogId, cacheDir);
      // Products at most 2 and goals at most 1 at a time in memory: every page fetches what it shows.
      const goals = new PostgresStoreGoals(services.db, catalogId, catalog.goals.length, 1);
      return createStoreOver(
        new PostgresStoreProducts(services.db, catalogId, snapshot, 2),
        goals,
        options.search,
        options,
      );
    });
    expect(sut.filter((result) => !result.passed)).toEqual([]);
    expect(sut).toEqual(inMemory);
    expect(sut).toHaveLength(77);
  });

  it('reads a goal only once loaded, exactly as imported, and names a goal missing in Postgres and the fix', async () => {
    const catalog = fixturePart('synthetic');
    await importCatalog('lazy-goals', catalog);
    const count = catalog.goals.length;
    const sut = new PostgresStoreGoals(services.db, 'lazy-goals', count, 4);
    expect(() => sut.at(1)).toThrow(/goal 1 of WebShop catalog lazy-goals is not loaded/);
    expect(() => sut.at(count)).toThrow(RangeError);
    // Goals loaded together come in one query, in any order, repeated or not.
    await sut.load([3, 1, 3, 0]);
    for (const index of [0, 1, 3]) expect(sut.at(index).record).toEqual(catalog.goals[index]);
    expect(sut.at(3).instructionText).toBe(catalog.goals[3]?.instruction_text);
    // The store cannot draw a goal by weight from goals it does not hold.
    const store = createStoreOver(
      new PostgresStoreProducts(
        services.db,
        'lazy-goals',
        (await openCatalogSearchSnapshot(services.db, 'lazy-goals', freshCache())).snapshot,
      ),
      sut,
      { search: () => [] },
    );
    expect(() => store.sampleGoalIndex()).toThrow(/give a goal index/);
    await services.db
      .withTables<WebshopTables>()
      .deleteFrom('webshop_goals')
      .where('catalog_id', '=', 'lazy-goals')
      .where('goal_index', '=', 2)
      .execute();
    await expect(sut.load([2])).rejects.toThrow(
      'WebShop catalog lazy-goals: goal 2 is missing in Postgres (re-import the catalog)',
    );
  });

  it('ranks every goal instruction with the stored snapshot exactly as an index built in memory', async () => {
    const catalog = fixturePart('human');
    await importCatalog('ranking', catalog);
    const { snapshot, downloaded } = await openCatalogSearchSnapshot(
      services.db,
      'ranking',
      freshCache(),
    );
    expect(downloaded).toBe(true);
    const memory = buildSearchIndex(
      catalog.products.map((product) => ({
        asin: product.asin,
        contents: buildSearchContents(product),
      })),
    );
    const queries = [
      ...catalog.goals.map((goal) => goal.instruction_text),
      ...catalog.products.map((product) => product.Title),
    ];
    for (const query of queries)
      expect(snapshot.searchWithTotal(query.toLowerCase(), 50), query).toEqual(
        memory.searchWithTotal(query.toLowerCase(), 50),
      );
    snapshot.close();
  });
});

describe('opening a catalog snapshot', () => {
  it('copies it from Postgres once per machine, then opens the cached copy', async () => {
    await importCatalog('cached', fixturePart('synthetic'));
    const cacheDir = freshCache();
    const first = await openStoreFromSnapshot(services.db, 'cached', { cacheDir });
    const second = await openStoreFromSnapshot(services.db, 'cached', { cacheDir });
    expect([first.snapshot?.downloaded, second.snapshot?.downloaded]).toEqual([true, false]);
    expect(readdirSync(cacheDir)).toHaveLength(1);
    first.close();
    second.close();
  });

  it('replaces a truncated or damaged cached copy instead of ranking from it', async () => {
    await importCatalog('damaged-cache', fixturePart('human'));
    const cacheDir = freshCache();
    const opened = await openCatalogSearchSnapshot(services.db, 'damaged-cache', cacheDir);
    const expected = opened.snapshot.search('deodorant', 50);
    opened.snapshot.close();
    const [file] = readdirSync(cacheDir);
    const path = join(cacheDir, file ?? '');
    truncateSync(path, statSync(path).size - 100);
    const reopened = await openCatalogSearchSnapshot(services.db, 'damaged-cache', cacheDir);
    expect(reopened.downloaded).toBe(true);
    expect(reopened.snapshot.search('deodorant', 50)).toEqual(expected);
    reopened.snapshot.close();
  });

  it('refuses a snapshot damaged in Postgres with one line that names the fix', async () => {
    await importCatalog('damaged-stored', fixturePart('human'));
    await sql`update webshop_search_snapshot_chunks set data = overlay(data placing '\\x00ff'::bytea from 200) where catalog_id = 'damaged-stored'`.execute(
      services.db,
    );
    const opening = openCatalogSearchSnapshot(services.db, 'damaged-stored', freshCache());
    await expect(opening).rejects.toThrow(SearchSnapshotError);
    await expect(opening).rejects.toThrow(
      /damaged .*sha256 mismatch.*scheduler webshop index --catalog damaged-stored/,
    );
  });

  it('says in one line that a catalog without a snapshot needs `webshop index`, which then builds it', async () => {
    const catalog = fixturePart('synthetic');
    await importCatalog('unindexed', catalog);
    await services.db
      .withTables<WebshopTables>()
      .deleteFrom('webshop_search_snapshots')
      .where('catalog_id', '=', 'unindexed')
      .execute();
    const refused = openStoreFromSnapshot(services.db, 'unindexed', { cacheDir: freshCache() });
    await expect(refused).rejects.toThrow(SearchSnapshotMissingError);
    await expect(refused).rejects.toThrow(
      /^WebShop catalog unindexed has no search index snapshot: build it once with `scheduler webshop index --catalog unindexed`$/,
    );
    expect(await rebuildCatalogSearchSnapshot(services.db, 'unindexed')).toMatchObject({
      documents: catalog.products.length,
    });
    const loaded = await openStoreFromSnapshot(services.db, 'unindexed', {
      cacheDir: freshCache(),
    });
    const memory = buildSearchIndex(
      catalog.products.map((product) => ({
        asin: product.asin,
        contents: buildSearchContents(product),
      })),
    );
    for (const goal of catalog.goals) {
      expect(
        await loaded.store.searchAsins(goal.instruction_text.toLowerCase().split(' ')),
        goal.instruction_text,
      ).toEqual(memory.search(goal.instruction_text.toLowerCase(), 50).map((hit) => hit.asin));
    }
    loaded.close();
  });

  it('treats the snapshot of an earlier import of the same id as stale: a re-import brings its own', async () => {
    const catalog = fixturePart('human');
    const cacheDir = freshCache();
    const firstVersion = await importCatalog('reimported', catalog);
    const first = await openStoreFromSnapshot(services.db, 'reimported', { cacheDir });
    expect(first.snapshot?.version).toBe(firstVersion);
    const secondVersion = await importCatalog('reimported', {
      ...catalog,
      products: catalog.products.slice(0, 3),
    });
    const second = await openStoreFromSnapshot(services.db, 'reimported', { cacheDir });
    expect(second.snapshot).toMatchObject({ version: secondVersion, downloaded: true });
    expect(second.products).toBe(3);
    expect(readdirSync(cacheDir).sort()).toEqual(
      [`reimported--${firstVersion}.bfidx`, `reimported--${secondVersion}.bfidx`].sort(),
    );
    // A copy of an earlier version untouched for an hour is removed when a newer one is copied in.
    const oldCopy = join(cacheDir, `reimported--${firstVersion}.bfidx`);
    utimesSync(oldCopy, new Date(Date.now() - 2 * 3_600_000), new Date(Date.now() - 2 * 3_600_000));
    const thirdVersion = await importCatalog('reimported', catalog);
    const third = await openStoreFromSnapshot(services.db, 'reimported', { cacheDir });
    expect(readdirSync(cacheDir).sort()).toEqual(
      [`reimported--${secondVersion}.bfidx`, `reimported--${thirdVersion}.bfidx`].sort(),
    );
    third.close();
    // A snapshot left from the earlier version (as a failed rebuild could leave it) is refused.
    await sql`update webshop_search_snapshots set version = ${secondVersion} where catalog_id = 'reimported'`.execute(
      services.db,
    );
    await expect(openStoreFromSnapshot(services.db, 'reimported', { cacheDir })).rejects.toThrow(
      /is stale \(built for version/,
    );
    first.close();
    second.close();
  });
});
