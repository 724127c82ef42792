import { type Database } from '@benchfleet/db';
import { WebshopCatalogRepository } from './webshop-catalog-repository.js';
import {
  createCatalogStore,
  createStoreOver,
  storeSearchFromIndex,
  type CatalogStoreProduct,
  type Store,
  type WebshopGoal,
} from '@benchfleet/webshop';
import { openCatalogSearchSnapshot } from './catalog-search-snapshot.js';
import { PostgresStoreGoals } from './postgres-store-goals.js';
import { DEFAULT_PRODUCT_CACHE_ENTRIES, PostgresStoreProducts } from './postgres-store-products.js';

export interface LoadedStore {
  catalogId: string;
  store: Store;
  products: number;
  goals: number;
  loadMs: number;
  /** Snapshot-backed stores: the snapshot's size, and whether it was copied from Postgres at this load. */
  snapshot?: { bytes: number; downloaded: boolean; version: string };
  /** Releases what the store holds open (the snapshot file). */
  close(): void;
}

async function loadGoals(db: Database, catalogId: string): Promise<WebshopGoal[]> {
  const goalRows = await new WebshopCatalogRepository(db).goals(catalogId);
  goalRows.forEach((row, i) => {
    if (row.goal_index !== i)
      throw new Error(
        `WebShop catalog ${catalogId}: goal ${i} is missing (found ${row.goal_index})`,
      );
  });
  return goalRows.map((row) => row.goal as unknown as WebshopGoal);
}

/**
 * Builds the store (and its search index) of a catalog from Postgres wholly in memory: the site
 * (`webshop serve`) and in-process comparisons use it. Workers open the snapshot instead.
 */
export async function loadStoreFromDatabase(db: Database, catalogId: string): Promise<LoadedStore> {
  const started = Date.now();
  const repository = new WebshopCatalogRepository(db);
  const [rows, goals] = await Promise.all([
    repository.products(catalogId),
    loadGoals(db, catalogId),
  ]);
  if (rows.length === 0)
    throw new Error(
      `WebShop catalog ${catalogId} has no products in Postgres; import it with \`scheduler webshop import\``,
    );
  const products = rows.map((row) => row.product as unknown as CatalogStoreProduct);
  const productPrices = new Map(rows.map((row) => [row.asin, row.price]));
  const store = createCatalogStore({ products, productPrices, goals });
  return {
    catalogId,
    store,
    products: products.length,
    goals: goals.length,
    loadMs: Date.now() - started,
    close: () => undefined,
  };
}

export interface SnapshotStoreOptions {
  /** Where this machine keeps copies of search snapshots. */
  readonly cacheDir: string;
  /** Products kept in memory (least recently used go first). */
  readonly productCacheEntries?: number;
  /** Bytes of posting lists kept in memory (least recently used go first). */
  readonly postingsCacheBytes?: number;
}

/**
 * A worker's store: the catalog's search snapshot opened from the local cache (copied from
 * Postgres once per machine and catalog version), goals and products fetched on demand.
 */
export async function openStoreFromSnapshot(
  db: Database,
  catalogId: string,
  options: SnapshotStoreOptions,
): Promise<LoadedStore> {
  const started = Date.now();
  const [{ snapshot, downloaded }, catalog] = await Promise.all([
    openCatalogSearchSnapshot(
      db,
      catalogId,
      options.cacheDir,
      options.postingsCacheBytes === undefined
        ? {}
        : { postingsCacheBytes: options.postingsCacheBytes },
    ),
    new WebshopCatalogRepository(db).get(catalogId),
  ]);
  if (catalog === undefined)
    throw new Error(
      `WebShop catalog ${catalogId} is not in Postgres; import it with \`scheduler webshop import\``,
    );
  const goals = new PostgresStoreGoals(db, catalogId, catalog.goals);
  const products = new PostgresStoreProducts(
    db,
    catalogId,
    snapshot,
    options.productCacheEntries ?? DEFAULT_PRODUCT_CACHE_ENTRIES,
  );
  // The snapshot indexes exactly this catalog version's products.
  const store = createStoreOver(products, goals, {
    ...storeSearchFromIndex(snapshot),
    listsOnlyStoreProducts: true,
  });
  return {
    catalogId,
    store,
    products: products.count,
    goals: goals.count,
    loadMs: Date.now() - started,
    snapshot: { bytes: snapshot.fileBytes, downloaded, version: snapshot.version },
    close: () => snapshot.close(),
  };
}

/** One store per catalog, loaded once and shared by every episode of this process. */
export class StoreCache {
  private readonly stores = new Map<string, Promise<LoadedStore>>();

  constructor(
    private readonly load: (catalogId: string) => Promise<LoadedStore>,
    private readonly onLoaded: (loaded: LoadedStore) => void = () => undefined,
  ) {}

  get(catalogId: string): Promise<LoadedStore> {
    let loading = this.stores.get(catalogId);
    if (!loading) {
      loading = this.load(catalogId).then((loaded) => {
        this.onLoaded(loaded);
        return loaded;
      });
      loading.catch(() => this.stores.delete(catalogId));
      this.stores.set(catalogId, loading);
    }
    return loading;
  }

  /** Closes every loaded store (at shutdown). */
  async close(): Promise<void> {
    const loaded = await Promise.allSettled(this.stores.values());
    for (const result of loaded) if (result.status === 'fulfilled') result.value.close();
    this.stores.clear();
  }
}
