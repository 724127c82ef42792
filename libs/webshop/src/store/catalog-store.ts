import type { WebshopGoal } from '../catalog/index.js';
import { defaultNounExtractor, getReward, type NounExtractor, type RewardProduct } from '../reward/index.js';
import { buildSearchContents, buildSearchIndex, type SearchIndex } from '../search/index.js';
import { Store, type StoreGoal, type StoreSearch } from './store.js';
import { storeProductFromProcessed, type ProcessedProduct } from './store-product.js';

/** A product as both the store and the reward read it (a loaded `WebshopProduct` is one). */
export type CatalogStoreProduct = ProcessedProduct & RewardProduct;

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

/** The store over a loaded catalog, rewarding purchases with the original's `get_reward`. */
export function createCatalogStore(catalog: StoreCatalog, options: CatalogStoreOptions = {}): Store {
  const productsByAsin = new Map(catalog.products.map((product) => [product.asin, product]));
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
  const nounExtractor = options.nounExtractor;
  return new Store({
    products: catalog.products.map(storeProductFromProcessed),
    prices: catalog.productPrices,
    goals: catalog.goals.map(storeGoalFromWebshopGoal),
    search,
    random: options.random,
    searchCacheSize: options.searchCacheSize,
    scorePurchase: ({ goalIndex, asin, price, options: selected }) => {
      const product = productsByAsin.get(asin);
      const goal = catalog.goals[goalIndex];
      if (product === undefined || goal === undefined) throw new RangeError(`cannot score ${asin} for goal ${goalIndex}`);
      return getReward(product, goal, price, Object.fromEntries(selected), {
        nounExtractor: nounExtractor ?? defaultNounExtractor(),
      });
    },
  });
}
