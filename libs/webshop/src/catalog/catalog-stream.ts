import type { CatalogSource } from './load-products.js';
import {
  CatalogBuilder,
  type BuildWebshopCatalogOptions,
  type PricedProduct,
  type WebshopCatalog,
} from './webshop-catalog.js';

export type StreamedCatalog = Pick<WebshopCatalog, 'goals' | 'skippedInstructions'> & {
  /** Cleaned products handed to the sink. */
  products: number;
};

export type StreamCatalogOptions = BuildWebshopCatalogOptions & {
  /** Products per sink call (default 1,000). */
  batchSize?: number;
};

/**
 * buildWebshopCatalog for catalogs of any size: raw products arrive one at a time (from a file
 * stream or a list) and go to `sink` cleaned and priced, in file order and in batches, instead of
 * being kept; the goals come back at the end. Same CatalogBuilder, so the same result.
 */
export async function streamWebshopCatalog(
  rawItems: AsyncIterable<unknown> | Iterable<unknown>,
  source: Pick<CatalogSource, 'attributes' | 'humanInstructions' | 'fileNames'>,
  options: StreamCatalogOptions,
  sink: (batch: PricedProduct[]) => Promise<void>,
): Promise<StreamedCatalog> {
  const builder = new CatalogBuilder(source, options);
  const batchSize = options.batchSize ?? 1_000;
  let batch: PricedProduct[] = [];
  let products = 0;
  for await (const rawItem of rawItems) {
    if (builder.full) break;
    const priced = builder.add(rawItem);
    if (priced === undefined) continue;
    batch.push(priced);
    products += 1;
    if (batch.length >= batchSize) {
      await sink(batch);
      batch = [];
    }
  }
  if (batch.length > 0) await sink(batch);
  return { products, ...builder.goals() };
}
