import {
  generateDemoCatalog,
  rawItemsOf,
  readInstructionFiles,
  streamRawItems,
  streamWebshopCatalog,
  webshopGoalSplit,
  DEMO_CATALOG_SIZE,
  type CatalogFilePaths,
  type CatalogSource,
  type PricedProduct,
  type StreamedCatalog,
} from '@benchfleet/webshop';
import { randomUUID } from 'node:crypto';
import {
  CatalogSearchSnapshotBuilder,
  type BuiltSearchSnapshot,
} from './catalog-search-snapshot.js';
import { type Database } from '@benchfleet/db';
import { WebshopCatalogRepository } from './webshop-catalog-repository.js';

export type GoalMode = 'human' | 'synthetic';

export interface CatalogImportRequest {
  catalogId: string;
  /** Parsed contents (the demo), or the files, whose products are streamed rather than read whole. */
  source: CatalogSource | CatalogFilePaths;
  description: Record<string, unknown>;
  goalMode: GoalMode;
  seed: number;
  numProducts?: number;
}

export interface CatalogImportReport {
  catalogId: string;
  /** This import's version: what decides which search snapshot workers open. */
  version: string;
  searchSnapshotBytes: number;
  products: number;
  goals: number;
  splits: Record<string, number>;
  skippedInstructions: number;
}

/** How far an import is: products written so far, and done/total in `unit` (MB read of a file, or products). */
export type CatalogImportProgress = {
  done: number;
  total: number;
  unit: 'MB' | 'products';
  products: number;
};

type OpenedSource = {
  rawItems: AsyncIterable<unknown> | Iterable<unknown>;
  instructions: Pick<CatalogSource, 'attributes' | 'humanInstructions' | 'fileNames'>;
  position(products: number): Pick<CatalogImportProgress, 'done' | 'total' | 'unit'>;
};

function isFileSource(source: CatalogImportRequest['source']): source is CatalogFilePaths {
  return 'itemsFile' in source;
}

function openSource(source: CatalogImportRequest['source']): OpenedSource {
  if (!isFileSource(source)) {
    const rawItems = rawItemsOf(source);
    return {
      rawItems,
      instructions: source,
      position: (products) => ({ done: products, total: rawItems.length, unit: 'products' }),
    };
  }
  const instructions = readInstructionFiles(source);
  const items = streamRawItems(source.itemsFile);
  const mb = (bytes: number) => Math.round(bytes / 1e5) / 10;
  return {
    rawItems: items.items,
    instructions,
    position: () => ({ done: mb(items.bytesRead()), total: mb(items.bytes), unit: 'MB' }),
  };
}

/**
 * Cleans the products and draws the goals exactly as WebShop does, storing both in one transaction.
 * Products stream from the items file to Postgres page by page, so the full ~5 GB catalogue imports
 * without being held in memory; a bad record anywhere leaves nothing stored. The search index is
 * built from the same stream and stored with them as a snapshot of this import's version.
 */
export async function importWebshopCatalog(
  db: Database,
  request: CatalogImportRequest,
  onProgress?: (progress: CatalogImportProgress) => void,
): Promise<CatalogImportReport> {
  const opened = openSource(request.source);
  let skippedInstructions = 0;
  const splits: Record<string, number> = {};
  const version = randomUUID();
  const index = new CatalogSearchSnapshotBuilder({ catalogId: request.catalogId, version });
  let built: BuiltSearchSnapshot | undefined;
  try {
    const stored = await new WebshopCatalogRepository(db).import(
      {
        id: request.catalogId,
        version,
        source: { ...request.description, goal_mode: request.goalMode },
        goalSeed: request.seed,
      },
      async (writeProducts) => {
        let written = 0;
        // One page is written while the next is parsed; a failed write surfaces at the next page or the end.
        let writing: Promise<void> = Promise.resolve();
        const sink = async (batch: PricedProduct[]): Promise<void> => {
          for (const { product } of batch)
            index.add({
              asin: product.asin,
              Title: product.Title,
              Description: product.Description,
              BulletPoints: product.BulletPoints,
              options: product.options,
            });
          await writing;
          writing = writeProducts(
            batch.map(({ product, price }) => ({
              asin: product.asin,
              price,
              product: product as unknown as Record<string, unknown>,
            })),
          ).then(() => {
            written += batch.length;
            onProgress?.({ ...opened.position(written), products: written });
          });
          writing.catch(() => undefined);
        };
        const options = {
          goalMode: request.goalMode,
          priceSeed: request.seed,
          ...(request.numProducts !== undefined ? { numProducts: request.numProducts } : {}),
        };
        let streamed: StreamedCatalog;
        try {
          streamed = await streamWebshopCatalog(
            opened.rawItems,
            opened.instructions,
            options,
            sink,
          );
        } catch (error) {
          await writing.catch(() => undefined);
          throw error;
        }
        await writing;
        skippedInstructions = streamed.skippedInstructions;
        const goals = streamed.goals.map((goal, goalIndex) => {
          const split = webshopGoalSplit(goalIndex);
          splits[split] = (splits[split] ?? 0) + 1;
          return {
            goalIndex,
            split,
            asin: goal.asin,
            instruction: goal.instruction_text,
            goal: goal as unknown as Record<string, unknown>,
          };
        });
        built = await index.finish();
        return { goals, searchSnapshot: built.upload };
      },
    );
    return {
      catalogId: request.catalogId,
      version,
      products: stored.products,
      goals: stored.goals,
      splits,
      skippedInstructions,
      searchSnapshotBytes: built?.upload.bytes ?? 0,
    };
  } finally {
    await built?.dispose();
  }
}

export function demoCatalogRequest(options: {
  products?: number;
  seed: number;
  goalMode?: GoalMode;
  catalogId?: string;
}): CatalogImportRequest {
  const products = options.products ?? DEMO_CATALOG_SIZE;
  const demo = generateDemoCatalog({ products, seed: options.seed });
  return {
    catalogId: options.catalogId ?? 'demo',
    source: {
      ...demo,
      fileNames: {
        items: 'demo items',
        attributes: 'demo attributes',
        humanInstructions: 'demo human instructions',
      },
    },
    description: { kind: 'demo', products, generator_seed: options.seed },
    goalMode: options.goalMode ?? 'human',
    seed: options.seed,
  };
}

export function fileCatalogRequest(options: {
  items: string;
  attributes: string;
  human?: string;
  goalMode?: GoalMode;
  seed: number;
  catalogId?: string;
  numProducts?: number;
}): CatalogImportRequest {
  const goalMode = options.goalMode ?? (options.human ? 'human' : 'synthetic');
  const source: CatalogFilePaths = {
    itemsFile: options.items,
    attributesFile: options.attributes,
    ...(options.human ? { humanInstructionsFile: options.human } : {}),
  };
  const base =
    options.items
      .replace(/^.*\//, '')
      .replace(/\.json$/, '')
      .replace(/^items_shuffle_?/, '') || 'full';
  return {
    catalogId: options.catalogId ?? `webshop-${base}-${goalMode}`,
    source,
    description: {
      kind: 'files',
      items: options.items,
      attributes: options.attributes,
      human: options.human ?? null,
    },
    goalMode,
    seed: options.seed,
    ...(options.numProducts !== undefined ? { numProducts: options.numProducts } : {}),
  };
}
