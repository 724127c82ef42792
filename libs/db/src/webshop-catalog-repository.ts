import type { Database } from './database.js';

const PAGE = 1_000;

export interface CatalogImport {
  id: string;
  source: Record<string, unknown>;
  goalSeed: number;
  products: Array<{ asin: string; price: number; product: Record<string, unknown> }>;
  goals: Array<{ goalIndex: number; split: 'test' | 'eval' | 'train'; asin: string; instruction: string; goal: Record<string, unknown> }>;
}

export interface StoredGoal {
  goal_index: number;
  split: 'test' | 'eval' | 'train';
  asin: string;
  instruction: string;
  goal: Record<string, unknown>;
}

export function webshopCatalogRepository(db: Database) {
  return {
    /** Replaces a catalog with the same id; products and goals land together or not at all. */
    async import(catalog: CatalogImport, onProgress?: (done: number, total: number) => void): Promise<void> {
      const total = catalog.products.length + catalog.goals.length;
      let done = 0;
      await db.transaction().execute(async (trx) => {
        await trx.deleteFrom('webshop_catalogs').where('id', '=', catalog.id).execute();
        await trx
          .insertInto('webshop_catalogs')
          .values({
            id: catalog.id,
            source: JSON.stringify(catalog.source),
            goal_seed: catalog.goalSeed,
            products: catalog.products.length,
            goals: catalog.goals.length,
          })
          .execute();
        for (let i = 0; i < catalog.products.length; i += PAGE) {
          const page = catalog.products.slice(i, i + PAGE);
          await trx
            .insertInto('webshop_products')
            .values(page.map((p, j) => ({ catalog_id: catalog.id, seq: i + j, asin: p.asin, price: p.price, product: JSON.stringify(p.product) })))
            .execute();
          done += page.length;
          onProgress?.(done, total);
        }
        for (let i = 0; i < catalog.goals.length; i += PAGE) {
          const page = catalog.goals.slice(i, i + PAGE);
          await trx
            .insertInto('webshop_goals')
            .values(
              page.map((g) => ({
                catalog_id: catalog.id,
                goal_index: g.goalIndex,
                split: g.split,
                asin: g.asin,
                instruction: g.instruction,
                goal: JSON.stringify(g.goal),
              })),
            )
            .execute();
          done += page.length;
          onProgress?.(done, total);
        }
      });
    },

    async latestId(): Promise<string | undefined> {
      const row = await db.selectFrom('webshop_catalogs').select('id').orderBy('imported_at', 'desc').limit(1).executeTakeFirst();
      return row?.id;
    },

    async get(catalogId: string) {
      return db.selectFrom('webshop_catalogs').selectAll().where('id', '=', catalogId).executeTakeFirst();
    },

    async list() {
      return db.selectFrom('webshop_catalogs').selectAll().orderBy('imported_at', 'desc').execute();
    },

    /** Products in import order (the order the original catalog file had). */
    async products(catalogId: string): Promise<Array<{ asin: string; price: number; product: Record<string, unknown> }>> {
      return db.selectFrom('webshop_products').select(['asin', 'price', 'product']).where('catalog_id', '=', catalogId).orderBy('seq').execute();
    },

    async goals(catalogId: string): Promise<StoredGoal[]> {
      return db
        .selectFrom('webshop_goals')
        .select(['goal_index', 'split', 'asin', 'instruction', 'goal'])
        .where('catalog_id', '=', catalogId)
        .orderBy('goal_index')
        .execute();
    },
  };
}

export type WebshopCatalogRepository = ReturnType<typeof webshopCatalogRepository>;
