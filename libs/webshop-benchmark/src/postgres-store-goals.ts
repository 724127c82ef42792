import { LruMap } from '@benchfleet/core';
import { GroupCommit, type Database } from '@benchfleet/db';
import { WebshopCatalogRepository } from './webshop-catalog-repository.js';
import {
  storeGoalFromWebshopGoal,
  type StoreGoal,
  type StoreGoals,
  type WebshopGoal,
} from '@benchfleet/webshop';

/** Goals kept per worker by default: far more than the episodes it runs at once. */
const DEFAULT_GOAL_CACHE_ENTRIES = 2_000;

/**
 * A catalog's goals fetched from Postgres when an episode starts (the episodes starting together
 * share one query, by group commit) and kept in a bounded least-recently-used cache. A worker never
 * holds the whole list: at the full catalogue that is 530,750 goals, most of its memory and start-up.
 * Goals come exactly as imported; this source cannot draw a goal by weight (runs name every goal).
 */
export class PostgresStoreGoals implements StoreGoals {
  private readonly cache: LruMap<number, StoreGoal>;
  private readonly inFlight = new Map<number, Promise<void>>();
  private readonly fetcher: GroupCommit<number, StoreGoal | undefined>;

  constructor(
    db: Database,
    private readonly catalogId: string,
    readonly count: number,
    cacheEntries = DEFAULT_GOAL_CACHE_ENTRIES,
  ) {
    this.cache = new LruMap(cacheEntries);
    const repository = new WebshopCatalogRepository(db);
    this.fetcher = new GroupCommit(async (indices) => {
      const rows = await repository.goalsByIndex(catalogId, [...new Set(indices)]);
      const found = new Map(
        rows.map((row) => [
          row.goal_index,
          storeGoalFromWebshopGoal(row.goal as unknown as WebshopGoal),
        ]),
      );
      return indices.map((index) => found.get(index));
    });
  }

  at(index: number): StoreGoal {
    this.checkIndex(index);
    const goal = this.cache.get(index);
    if (goal === undefined)
      throw new Error(
        `goal ${index} of WebShop catalog ${this.catalogId} is not loaded: load it first`,
      );
    return goal;
  }

  async load(indices: readonly number[]): Promise<void> {
    await Promise.all(indices.map((index) => this.loadOne(index)));
  }

  private loadOne(index: number): Promise<void> {
    this.checkIndex(index);
    if (this.cache.get(index) !== undefined) return Promise.resolve();
    let loading = this.inFlight.get(index);
    if (loading === undefined) {
      loading = this.fetcher
        .submit(index)
        .then((goal) => {
          if (goal === undefined)
            throw new Error(
              `WebShop catalog ${this.catalogId}: goal ${index} is missing in Postgres (re-import the catalog)`,
            );
          this.cache.set(index, goal);
        })
        .finally(() => this.inFlight.delete(index));
      this.inFlight.set(index, loading);
    }
    return loading;
  }

  private checkIndex(index: number): void {
    if (!Number.isInteger(index) || index < 0 || index >= this.count)
      throw new RangeError(`goal index ${index} is outside 0..${this.count - 1}`);
  }
}
