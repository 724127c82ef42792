import type { WebshopGoal, WebshopProduct } from './catalog-schemas.js';
import { getHumanGoals, getSyntheticGoals, orderGoalsLikeWebshop } from './goals.js';
import { carriesGoals, parseInstructionFiles, ProductCleaner, type CatalogSource } from './load-products.js';
import { drawHiddenPrice } from './product-prices.js';
import { PythonRandom } from './python-random.js';
import type { BuildWebshopCatalogOptions } from './webshop-catalog.js';

export type PricedProduct = { product: WebshopProduct; price: number };

export type StreamedCatalog = {
  /** Cleaned products handed to the sink. */
  products: number;
  /** In goal-index order (after the seed-233 shuffle). */
  goals: WebshopGoal[];
  skippedInstructions: number;
};

export type StreamCatalogOptions = BuildWebshopCatalogOptions & {
  /** Products per sink call (default 1,000). */
  batchSize?: number;
};

/** What goal generation reads of a product; the rest of a product is not kept while streaming. */
/**
 * The fields goals read, as a fresh copy: strings cut from a streamed file can share the file's
 * read buffers, so keeping one would keep whole buffers alive for the length of the import.
 */
function goalView(product: WebshopProduct): WebshopProduct {
  const view = { ...product, Description: '', BulletPoints: [], full_description: '', small_description: [], images: [], customization_options: null, option_to_image: {} };
  return JSON.parse(JSON.stringify(view)) as WebshopProduct;
}

/**
 * buildWebshopCatalog for catalogs of any size: raw products arrive one at a time (from a file
 * stream or a list), are cleaned and priced in file order and handed to `sink` in batches; only the
 * few fields goals need of the products that carry instructions are kept. Random draws happen in
 * upstream's order (every hidden price, then the price limits of the goals), so the result equals
 * buildWebshopCatalog's for the same input and seed.
 */
export async function streamWebshopCatalog(
  rawItems: AsyncIterable<unknown> | Iterable<unknown>,
  source: Pick<CatalogSource, 'attributes' | 'humanInstructions' | 'fileNames'>,
  options: StreamCatalogOptions,
  sink: (batch: PricedProduct[]) => Promise<void>,
): Promise<StreamedCatalog> {
  const { attributes, instructions, fileNames } = parseInstructionFiles(source, options.goalMode);
  const cleaner = new ProductCleaner(attributes, instructions, fileNames);
  const rng = new PythonRandom(options.priceSeed);
  const batchSize = options.batchSize ?? 1_000;
  const limit = options.numProducts === undefined ? Infinity : Math.max(0, options.numProducts);
  const goalProducts: WebshopProduct[] = [];
  const goalPrices = new Map<string, number>();
  let batch: PricedProduct[] = [];
  let products = 0;
  let index = 0;
  for await (const rawItem of rawItems) {
    if (index >= limit) break;
    const product = cleaner.clean(rawItem, index);
    index += 1;
    if (product === undefined) continue;
    const price = drawHiddenPrice(product.pricing, rng);
    if (carriesGoals(product)) {
      const view = goalView(product);
      goalProducts.push(view);
      goalPrices.set(view.asin, price);
    }
    batch.push({ product, price });
    products += 1;
    if (batch.length >= batchSize) {
      await sink(batch);
      batch = [];
    }
  }
  if (batch.length > 0) await sink(batch);

  if (options.goalMode === 'human') {
    const human = getHumanGoals(goalProducts, goalPrices, rng);
    return { products, goals: orderGoalsLikeWebshop(human.goals), skippedInstructions: human.skipped };
  }
  return { products, goals: orderGoalsLikeWebshop(getSyntheticGoals(goalProducts, goalPrices, rng)), skippedInstructions: 0 };
}
