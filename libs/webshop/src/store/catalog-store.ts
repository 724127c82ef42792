import type { WebshopGoal } from '../catalog/index.js';
import { defaultNounExtractor, getReward, type NounExtractor } from '../reward/index.js';
import { buildSearchContents, buildSearchIndex, type SearchIndex } from '../search/index.js';
import {
  InMemoryStoreGoals,
  InMemoryStoreProducts,
  Store,
  type CatalogEntry,
  type ScorePurchase,
  type StoreGoal,
  type StoreGoals,
  type StoreProducts,
  type StoreSearch,
} from './store.js';
import { storeProductFromProcessed, type CatalogStoreProduct } from './store-product.js';

export type { CatalogStoreProduct } from './store-product.js';

/** What `buildWebshopCatalog` returns, narrowed to what the store needs. */
export interface StoreCatalog {
  readonly products: readonly CatalogStoreProduct[];
  readonly productPrices: ReadonlyMap<string, number>;
  readonly goals: readonly WebshopGoal[];
}

export interface CatalogStoreOptions {
  /** Defaults to a BM25 index built over the products (WebShop's search documents). */
  readonly search?: StoreSearch;
  /** Nouns for the type reward; defaults to the reward module's default extractor. */
  readonly nounExtractor?: NounExtractor;
  readonly random?: () => number;
  readonly searchCacheSize?: number;
}

/** A search index as the store consumes it: ranked ASINs only. */
export function storeSearchFromIndex(index: SearchIndex): StoreSearch {
  return { search: (query, limit) => index.search(query, limit).map((hit) => hit.asin) };
}

export function storeGoalFromWebshopGoal(goal: WebshopGoal): StoreGoal {
  return { instructionText: goal.instruction_text, weight: goal.weight, record: goal };
}

/** A catalog product with its hidden price, as the store serves it. */
export function catalogEntryOf(record: CatalogStoreProduct, price: number): CatalogEntry {
  return { product: storeProductFromProcessed(record), record, price };
}

/** Goals held in memory, for the store. */
function storeGoalsOf(goals: readonly WebshopGoal[]): StoreGoals {
  return new InMemoryStoreGoals(goals.map(storeGoalFromWebshopGoal));
}

/** The original's `get_reward` for a purchase, against the goal of the episode (loaded by the store). */
function rewardScorer(goals: StoreGoals, nounExtractor?: NounExtractor): ScorePurchase {
  return ({ goalIndex, entry, options }) => {
    const goal = goals.at(goalIndex).record as WebshopGoal | undefined;
    if (goal === undefined)
      throw new RangeError(`cannot score ${entry.product.asin} for goal ${goalIndex}`);
    return getReward(entry.record, goal, entry.price, Object.fromEntries(options), {
      nounExtractor: nounExtractor ?? defaultNounExtractor(),
    });
  };
}

/** The store over products and goals from anywhere (memory, or Postgres on demand) with the original's reward. */
export function createStoreOver(
  products: StoreProducts,
  goalsGiven: readonly WebshopGoal[] | StoreGoals,
  search: StoreSearch,
  options: Omit<CatalogStoreOptions, 'search'> = {},
): Store {
  const goals = Array.isArray(goalsGiven) ? storeGoalsOf(goalsGiven) : (goalsGiven as StoreGoals);
  return new Store({
    products,
    goals,
    search,
    random: options.random,
    searchCacheSize: options.searchCacheSize,
    scorePurchase: rewardScorer(goals, options.nounExtractor),
  });
}

/** The store over a loaded catalog held in memory, its search index built here unless given. */
export function createCatalogStore(
  catalog: StoreCatalog,
  options: CatalogStoreOptions = {},
): Store {
  const entries = catalog.products.map((record) => {
    const price = catalog.productPrices.get(record.asin);
    if (price === undefined) throw new RangeError(`no hidden price for ASIN ${record.asin}`);
    return catalogEntryOf(record, price);
  });
  const search =
    options.search ??
    storeSearchFromIndex(
      buildSearchIndex(
        catalog.products.map((product) => ({
          asin: product.asin,
          contents: buildSearchContents({
            Title: product.Title,
            Description: product.Description,
            BulletPoints: product.BulletPoints,
            options: product.options,
          }),
        })),
      ),
    );
  return createStoreOver(new InMemoryStoreProducts(entries), catalog.goals, search, options);
}
