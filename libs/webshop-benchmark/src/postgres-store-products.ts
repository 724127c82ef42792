import { LruMap } from '@benchfleet/core';
import { GroupCommit, type Database } from '@benchfleet/db';
import { WebshopCatalogRepository } from './webshop-catalog-repository.js';
import {
  catalogEntryOf,
  type CatalogEntry,
  type CatalogStoreProduct,
  type OpenedSearchSnapshot,
  type ProductFilter,
  type StoreProducts,
} from '@benchfleet/webshop';

/** Products kept per worker by default: a few hundred results pages' worth. */
export const DEFAULT_PRODUCT_CACHE_ENTRIES = 5_000;

/**
 * A catalog's products fetched from Postgres when a page needs them (one query for the pages that
 * ask at the same time, by group commit) and kept in a bounded least-recently-used cache shared by the worker's episodes. Which asins
 * exist, and their catalog order, come from the search snapshot, so no query is needed for those.
 */
export class PostgresStoreProducts implements StoreProducts {
  private readonly cache: LruMap<string, CatalogEntry>;
  private readonly inFlight = new Map<string, Promise<CatalogEntry | undefined>>();
  private readonly repository;
  /** Each item is the asins one page misses; the pages asking meanwhile share the next query. */
  private readonly fetcher = new GroupCommit<readonly string[], ReadonlyMap<string, CatalogEntry>>(
    async (pages) => {
      const rows = await this.repository.productsByAsin(this.catalogId, [...new Set(pages.flat())]);
      const found = new Map(
        rows.map((row) => [
          row.asin,
          catalogEntryOf(row.product as unknown as CatalogStoreProduct, row.price),
        ]),
      );
      return pages.map(() => found);
    },
  );

  constructor(
    db: Database,
    private readonly catalogId: string,
    private readonly snapshot: Pick<OpenedSearchSnapshot, 'stats' | 'documentOf' | 'asinAt'>,
    cacheEntries = DEFAULT_PRODUCT_CACHE_ENTRIES,
  ) {
    this.cache = new LruMap(cacheEntries);
    this.repository = new WebshopCatalogRepository(db);
  }

  get count(): number {
    return this.snapshot.stats.documentCount;
  }

  has(asin: string): boolean {
    return this.snapshot.documentOf(asin) >= 0;
  }

  asinAt(position: number): string {
    return this.snapshot.asinAt(position);
  }

  async entries(asins: readonly string[]): Promise<ReadonlyArray<CatalogEntry | undefined>> {
    const toFetch: string[] = [];
    for (const asin of asins) {
      if (
        this.cache.has(asin) ||
        this.inFlight.has(asin) ||
        toFetch.includes(asin) ||
        !this.has(asin)
      )
        continue;
      toFetch.push(asin);
    }
    if (toFetch.length > 0) {
      // Everything missing, in the next query; concurrent callers asking for the same asins wait on it.
      const fetched = this.fetcher.submit(toFetch).then((found) => {
        for (const asin of toFetch) {
          const entry = found.get(asin);
          if (entry !== undefined) this.cache.set(asin, entry);
        }
        return found;
      });
      for (const asin of toFetch) {
        const entry = fetched.then((found) => found.get(asin));
        this.inFlight.set(asin, entry);
        void entry.finally(() => this.inFlight.delete(asin)).catch(() => undefined);
      }
    }
    return Promise.all(asins.map((asin) => this.lookup(asin)));
  }

  matching(filter: ProductFilter): Promise<readonly string[]> {
    return this.repository.asinsMatching(this.catalogId, filter);
  }

  private lookup(asin: string): CatalogEntry | undefined | Promise<CatalogEntry | undefined> {
    return this.cache.get(asin) ?? this.inFlight.get(asin);
  }
}
