import type { WebshopGoal, WebshopProduct } from './catalog-schemas.js';
import { getHumanGoals, getSyntheticGoals, orderGoalsLikeWebshop } from './goals.js';
import {
  carriesGoals,
  indexProducts,
  parseInstructionFiles,
  ProductCleaner,
  rawItemsOf,
  type CatalogSource,
  type GoalMode,
} from './load-products.js';
import { drawHiddenPrice } from './product-prices.js';
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

export type PricedProduct = { product: WebshopProduct; price: number };

/**
 * The fields goals read, as a fresh copy: strings cut from a streamed file can share the file's
 * read buffers, so keeping one would keep whole buffers alive for the length of an import.
 */
function goalView(product: WebshopProduct): WebshopProduct {
  const view = {
    ...product,
    Description: '',
    BulletPoints: [],
    full_description: '',
    small_description: [],
    images: [],
    customization_options: null,
    option_to_image: {},
  };
  return JSON.parse(JSON.stringify(view)) as WebshopProduct;
}

/**
 * What WebShop's SimServer builds at start-up, one raw product at a time: each is cleaned and gets
 * its hidden price as it comes (file order); goals are drawn once all have come, from the same
 * generator seeded with `priceSeed` (one price limit per goal for human goals, per product for
 * synthetic ones), then put in the seed-233 order. Of the products only what goals read is kept,
 * so a catalog of any size can pass through.
 */
export class CatalogBuilder {
  private readonly cleaner: ProductCleaner;
  private readonly rng: PythonRandom;
  private readonly limit: number;
  private readonly goalProducts: WebshopProduct[] = [];
  private readonly goalPrices = new Map<string, number>();
  private read = 0;

  constructor(
    source: Pick<CatalogSource, 'attributes' | 'humanInstructions' | 'fileNames'>,
    private readonly options: BuildWebshopCatalogOptions,
  ) {
    const { attributes, instructions, fileNames } = parseInstructionFiles(source, options.goalMode);
    this.cleaner = new ProductCleaner(attributes, instructions, fileNames);
    this.rng = new PythonRandom(options.priceSeed);
    this.limit = options.numProducts === undefined ? Infinity : Math.max(0, options.numProducts);
  }

  /** Whether `numProducts` raw records have been read (like upstream's `num_products`). */
  get full(): boolean {
    return this.read >= this.limit;
  }

  /** The next raw record, cleaned and priced; undefined for one `load_products` skips. */
  add(rawItem: unknown): PricedProduct | undefined {
    const product = this.cleaner.clean(rawItem, this.read);
    this.read += 1;
    if (product === undefined) return undefined;
    const price = drawHiddenPrice(product.pricing, this.rng);
    if (carriesGoals(product)) {
      this.goalProducts.push(goalView(product));
      this.goalPrices.set(product.asin, price);
    }
    return { product, price };
  }

  /** The goals in goal-index order; call once, after the last product. */
  goals(): Pick<WebshopCatalog, 'goals' | 'skippedInstructions'> {
    if (this.options.goalMode === 'human') {
      const human = getHumanGoals(this.goalProducts, this.goalPrices, this.rng);
      return { goals: orderGoalsLikeWebshop(human.goals), skippedInstructions: human.skipped };
    }
    return {
      goals: orderGoalsLikeWebshop(getSyntheticGoals(this.goalProducts, this.goalPrices, this.rng)),
      skippedInstructions: 0,
    };
  }
}

/** The whole catalog in memory from parsed files (see CatalogBuilder; streamWebshopCatalog for large files). */
export function buildWebshopCatalog(
  source: CatalogSource,
  options: BuildWebshopCatalogOptions,
): WebshopCatalog {
  const rawItems = rawItemsOf(source);
  const builder = new CatalogBuilder(source, options);
  const products: WebshopProduct[] = [];
  const productPrices = new Map<string, number>();
  for (const rawItem of rawItems) {
    if (builder.full) break;
    const priced = builder.add(rawItem);
    if (priced === undefined) continue;
    products.push(priced.product);
    productPrices.set(priced.product.asin, priced.price);
  }
  return {
    goalMode: options.goalMode,
    priceSeed: options.priceSeed,
    products,
    productPrices,
    ...indexProducts(products),
    ...builder.goals(),
  };
}
