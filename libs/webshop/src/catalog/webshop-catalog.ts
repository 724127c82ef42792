import type { WebshopGoal, WebshopProduct } from './catalog-schemas.js';
import { getHumanGoals, getSyntheticGoals, orderGoalsLikeWebshop } from './goals.js';
import { loadProducts, type CatalogSource, type GoalMode } from './load-products.js';
import { generateProductPrices } from './product-prices.js';
import { PythonRandom, type PythonSeed } from './python-random.js';

export type BuildWebshopCatalogOptions = {
  goalMode: GoalMode;
  /**
   * Seeds the hidden prices of range-priced products and every goal's `price_upper`. Upstream draws
   * them from the unseeded global `random`; with this seed the result equals upstream's after
   * `random.seed(priceSeed)` right before `SimServer(...)` is constructed. Store it with the goals.
   */
  priceSeed: PythonSeed;
  numProducts?: number;
};

export type WebshopCatalog = {
  goalMode: GoalMode;
  priceSeed: PythonSeed;
  products: WebshopProduct[];
  productByAsin: Map<string, WebshopProduct>;
  /** asin → hidden price used by the reward (`product_prices`). */
  productPrices: Map<string, number>;
  attributeToAsins: Map<string, Set<string>>;
  /** In goal-index order (after the seed-233 shuffle). */
  goals: WebshopGoal[];
  /** Human instructions skipped for having no instruction attributes. */
  skippedInstructions: number;
};

/**
 * What WebShop's SimServer builds at start-up: products, hidden prices, goals in index order. Draw
 * order as upstream: prices (product order), then one price limit per goal (human) or per product
 * (synthetic), from one generator seeded with `priceSeed`; then the seed-233 shuffle.
 */
export function buildWebshopCatalog(source: CatalogSource, options: BuildWebshopCatalogOptions): WebshopCatalog {
  const loaded = loadProducts(source, { goalMode: options.goalMode, numProducts: options.numProducts });
  const rng = new PythonRandom(options.priceSeed);
  const productPrices = generateProductPrices(loaded.products, rng);
  let goals: WebshopGoal[];
  let skippedInstructions = 0;
  if (options.goalMode === 'human') {
    const human = getHumanGoals(loaded.products, productPrices, rng);
    goals = human.goals;
    skippedInstructions = human.skipped;
  } else {
    goals = getSyntheticGoals(loaded.products, productPrices, rng);
  }
  return {
    goalMode: options.goalMode,
    priceSeed: options.priceSeed,
    ...loaded,
    productPrices,
    goals: orderGoalsLikeWebshop(goals),
    skippedInstructions,
  };
}
