import {
  buildWebshopCatalog,
  generateDemoCatalog,
  loadCatalogFiles,
  webshopGoalSplit,
  DEMO_CATALOG_SIZE,
  type CatalogSource,
} from '@benchfleet/webshop';
import { webshopCatalogRepository, type Database } from '@benchfleet/db';

export type GoalMode = 'human' | 'synthetic';

export interface CatalogImportRequest {
  catalogId: string;
  source: CatalogSource;
  description: Record<string, unknown>;
  goalMode: GoalMode;
  seed: number;
  numProducts?: number;
}

export interface CatalogImportReport {
  catalogId: string;
  products: number;
  goals: number;
  splits: Record<string, number>;
  skippedInstructions: number;
}

/** Cleans the products and draws the goals exactly as WebShop does, then stores both at once. */
export async function importWebshopCatalog(
  db: Database,
  request: CatalogImportRequest,
  onProgress?: (done: number, total: number) => void,
): Promise<CatalogImportReport> {
  const catalog = buildWebshopCatalog(request.source, {
    goalMode: request.goalMode,
    priceSeed: request.seed,
    ...(request.numProducts !== undefined ? { numProducts: request.numProducts } : {}),
  });
  const splits: Record<string, number> = {};
  const goals = catalog.goals.map((goal, goalIndex) => {
    const split = webshopGoalSplit(goalIndex);
    splits[split] = (splits[split] ?? 0) + 1;
    return { goalIndex, split, asin: goal.asin, instruction: goal.instruction_text, goal: goal as unknown as Record<string, unknown> };
  });
  await webshopCatalogRepository(db).import(
    {
      id: request.catalogId,
      source: { ...request.description, goal_mode: request.goalMode },
      goalSeed: request.seed,
      products: catalog.products.map((product) => ({
        asin: product.asin,
        price: catalog.productPrices.get(product.asin) ?? 0,
        product: product as unknown as Record<string, unknown>,
      })),
      goals,
    },
    onProgress,
  );
  return {
    catalogId: request.catalogId,
    products: catalog.products.length,
    goals: goals.length,
    splits,
    skippedInstructions: catalog.skippedInstructions,
  };
}

export function demoCatalogRequest(options: { products?: number; seed: number; goalMode?: GoalMode; catalogId?: string }): CatalogImportRequest {
  const products = options.products ?? DEMO_CATALOG_SIZE;
  const demo = generateDemoCatalog({ products, seed: options.seed });
  return {
    catalogId: options.catalogId ?? 'demo',
    source: { ...demo, fileNames: { items: 'demo items', attributes: 'demo attributes', humanInstructions: 'demo human instructions' } },
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
  const source = loadCatalogFiles({
    itemsFile: options.items,
    attributesFile: options.attributes,
    ...(options.human ? { humanInstructionsFile: options.human } : {}),
  });
  const base = options.items.replace(/^.*\//, '').replace(/\.json$/, '').replace(/^items_shuffle_?/, '') || 'full';
  return {
    catalogId: options.catalogId ?? `webshop-${base}-${goalMode}`,
    source,
    description: { kind: 'files', items: options.items, attributes: options.attributes, human: options.human ?? null },
    goalMode,
    seed: options.seed,
    ...(options.numProducts !== undefined ? { numProducts: options.numProducts } : {}),
  };
}
