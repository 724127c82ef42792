import { sql } from 'kysely';
import type { Database } from './database.js';

const PAGE = 1_000;

export interface CatalogHeader {
  id: string;
  source: Record<string, unknown>;
  goalSeed: number;
}

export type CatalogProductRow = { asin: string; price: number; product: Record<string, unknown> };

export type CatalogGoalRow = { goalIndex: number; split: 'test' | 'eval' | 'train'; asin: string; instruction: string; goal: Record<string, unknown> };

export interface StoredGoal {
  goal_index: number;
  split: 'test' | 'eval' | 'train';
  asin: string;
  instruction: string;
  goal: Record<string, unknown>;
}

export function webshopCatalogRepository(db: Database) {
  return {
    /**
     * Replaces the catalog with the same id. `fill` writes the products page by page, in catalog
     * order (so a catalog never has to be held whole), and returns the goals. One transaction: if
     * `fill` throws, nothing of the new catalog is stored and the earlier one stays as it was.
     */
    async import(
      header: CatalogHeader,
      fill: (writeProducts: (page: readonly CatalogProductRow[]) => Promise<void>) => Promise<readonly CatalogGoalRow[]>,
    ): Promise<{ products: number; goals: number }> {
      return db.transaction().execute(async (trx) => {
        await trx.deleteFrom('webshop_catalogs').where('id', '=', header.id).execute();
        await trx
          .insertInto('webshop_catalogs')
          .values({ id: header.id, source: JSON.stringify(header.source), goal_seed: header.goalSeed, products: 0, goals: 0 })
          .execute();
        let products = 0;
        const goals = await fill(async (page) => {
          for (let i = 0; i < page.length; i += PAGE) {
            const rows = page.slice(i, i + PAGE).map((p) => ({
              catalog_id: header.id,
              seq: products++,
              asin: p.asin,
              price: p.price,
              product: JSON.stringify(p.product),
            }));
            await trx.insertInto('webshop_products').values(rows).execute();
          }
        });
        for (let i = 0; i < goals.length; i += PAGE) {
          const rows = goals.slice(i, i + PAGE).map((g) => ({
            catalog_id: header.id,
            goal_index: g.goalIndex,
            split: g.split,
            asin: g.asin,
            instruction: g.instruction,
            goal: JSON.stringify(g.goal),
          }));
          await trx.insertInto('webshop_goals').values(rows).execute();
        }
        await trx.updateTable('webshop_catalogs').set({ products, goals: goals.length }).where('id', '=', header.id).execute();
        return { products, goals: goals.length };
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

    /** The goals' categories (WebShop's domains), sorted. */
    async categories(catalogId: string): Promise<string[]> {
      const rows = await db
        .selectFrom('webshop_goals')
        .select(sql<string>`coalesce(goal->>'category', 'webshop')`.as('category'))
        .distinct()
        .where('catalog_id', '=', catalogId)
        .orderBy('category')
        .execute();
      return rows.map((row) => row.category);
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
