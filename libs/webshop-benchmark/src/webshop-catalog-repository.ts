import { sql } from 'kysely';
import { to as copyTo } from 'pg-copy-streams';
import { allowLongTransaction, prepared, withPostgresClient, type Database } from '@benchfleet/db';
import { readBinaryCopyOfOneColumn } from './copy-binary.js';
import type { WebshopDatabase, WebshopTables } from './webshop-tables.js';

const PAGE = 1_000;

export interface CatalogHeader {
  id: string;
  /** New for every import (a UUID): which search snapshot belongs to this catalog's contents. */
  version: string;
  source: Record<string, unknown>;
  goalSeed: number;
}

/** A search index snapshot file to store, read back in chunks (each its own bytea row). */
export interface SearchSnapshotUpload {
  version: string;
  format: number;
  bytes: number;
  sha256: string;
  chunks(): AsyncIterable<Buffer>;
}

export type StoredSearchSnapshot = {
  catalogId: string;
  version: string;
  format: number;
  bytes: number;
  sha256: string;
  chunks: number;
};

/** Products a debug query (`<a>`, `<c>`, `<q>`) selects. */
export type CatalogProductFilter = { attribute: string } | { category: string } | { query: string };

/** The processed-product keys that only repeat others or that nothing after the import reads. */
const KEYS_NOT_SERVED = [
  'full_description',
  'small_description',
  'images',
  'customization_options',
  'instructions',
  'instruction_text',
  'instruction_attributes',
  'pricing',
  'Reviews',
  'Rating',
];

export type CatalogProductRow = { asin: string; price: number; product: Record<string, unknown> };

export type CatalogGoalRow = {
  goalIndex: number;
  split: 'test' | 'eval' | 'train';
  asin: string;
  instruction: string;
  goal: Record<string, unknown>;
};

export interface StoredGoal {
  goal_index: number;
  split: 'test' | 'eval' | 'train';
  asin: string;
  instruction: string;
  goal: Record<string, unknown>;
}

/**
 * WebShop's catalog tables: catalogs, their products and goals, and the search snapshot of each
 * (stored in chunks). Queries see WebShop's tables; the snapshot's COPY stream takes a client of
 * the pool itself.
 */
export class WebshopCatalogRepository {
  private readonly db: WebshopDatabase;

  constructor(private readonly pool: Database) {
    this.db = pool.withTables<WebshopTables>();
  }

  /**
   * Replaces the catalog with the same id. `fill` writes the products page by page, in catalog
   * order (so a catalog never has to be held whole), and returns the goals. One transaction: if
   * `fill` throws, nothing of the new catalog is stored and the earlier one stays as it was.
   */
  async import(
    header: CatalogHeader,
    fill: (
      writeProducts: (page: readonly CatalogProductRow[]) => Promise<void>,
    ) => Promise<{ goals: readonly CatalogGoalRow[]; searchSnapshot: SearchSnapshotUpload }>,
  ): Promise<{ products: number; goals: number }> {
    return this.db.transaction().execute(async (trx) => {
      await allowLongTransaction(trx);
      await replaceCatalogHeader(trx, header);
      let products = 0;
      const { goals, searchSnapshot } = await fill(async (page) => {
        products = await insertProducts(trx, header.id, page, products);
      });
      await insertGoals(trx, header.id, goals);
      if (searchSnapshot.version !== header.version)
        throw new Error(
          `search snapshot of version ${searchSnapshot.version} offered for catalog version ${header.version}`,
        );
      await writeSearchSnapshot(trx, header.id, searchSnapshot);
      await trx
        .updateTable('webshop_catalogs')
        .set({ products, goals: goals.length })
        .where('id', '=', header.id)
        .execute();
      return { products, goals: goals.length };
    });
  }

  /** Stores (or replaces) the search snapshot of the catalog's current version, in one transaction. */
  async replaceSearchSnapshot(catalogId: string, upload: SearchSnapshotUpload): Promise<void> {
    await this.db.transaction().execute(async (trx) => {
      await allowLongTransaction(trx);
      const catalog = await trx
        .selectFrom('webshop_catalogs')
        .select('version')
        .where('id', '=', catalogId)
        .forUpdate()
        .executeTakeFirst();
      if (!catalog) throw new Error(`WebShop catalog ${catalogId} does not exist`);
      if (catalog.version !== upload.version)
        throw new Error(
          `WebShop catalog ${catalogId} is now version ${catalog.version}, not ${upload.version}: it was re-imported meanwhile`,
        );
      await writeSearchSnapshot(trx, catalogId, upload);
    });
  }

  async searchSnapshot(catalogId: string): Promise<StoredSearchSnapshot | undefined> {
    const row = await this.db
      .selectFrom('webshop_search_snapshots')
      .selectAll()
      .where('catalog_id', '=', catalogId)
      .executeTakeFirst();
    return (
      row && {
        catalogId: row.catalog_id,
        version: row.version,
        format: row.format,
        bytes: row.bytes,
        sha256: row.sha256,
        chunks: row.chunks,
      }
    );
  }

  /**
   * Streams the catalog's stored search snapshot, chunk after chunk, to `onBytes` in pieces as
   * they arrive: one binary COPY, raw bytes (a query per chunk returned each as hex text that
   * cost four times the CPU to decode). Returns how many chunks were read.
   */
  async readSearchSnapshot(
    catalogId: string,
    onBytes: (piece: Buffer) => Promise<void> | void,
  ): Promise<number> {
    return withPostgresClient(
      this.pool,
      async (client) => {
        const stream = client.query(
          copyTo(
            `copy (select data from webshop_search_snapshot_chunks where catalog_id = ${client.escapeLiteral(catalogId)} order by chunk) to stdout (format binary)`,
          ),
        );
        return readBinaryCopyOfOneColumn(stream, onBytes);
      },
      { statementTimeoutMs: 30 * 60_000 },
    );
  }

  /**
   * The products of these asins (in any order) with their hidden prices, without the keys nothing
   * reads. Products are json, not jsonb, so their keys keep the file's order: it is dropped here,
   * not in SQL, where it would go through jsonb.
   */
  async productsByAsin(catalogId: string, asins: readonly string[]): Promise<CatalogProductRow[]> {
    if (asins.length === 0) return [];
    const { rows } = await sql<{ asin: string; price: number; product: unknown }>`${prepared}
        select asin, price, product from webshop_products where catalog_id = ${catalogId} and asin = any(${[...asins]}::text[])`.execute(
      this.db,
    );
    return rows.map((row) => ({
      asin: row.asin,
      price: row.price,
      product: servedProduct(row.product as Record<string, unknown>),
    }));
  }

  /** Asins of the products a debug query selects, in catalog order. */
  async asinsMatching(catalogId: string, filter: CatalogProductFilter): Promise<string[]> {
    let query = this.db
      .selectFrom('webshop_products')
      .select('asin')
      .where('catalog_id', '=', catalogId);
    if ('attribute' in filter)
      query = query.where(sql<boolean>`(product -> 'Attributes')::jsonb ? ${filter.attribute}`);
    else if ('category' in filter)
      query = query.where(sql<string>`product ->> 'category'`, '=', filter.category);
    else query = query.where(sql<string>`product ->> 'query'`, '=', filter.query);
    const rows = await query.orderBy('seq').execute();
    return rows.map((row) => row.asin);
  }

  /** The fields search documents are built from, for products after `afterSeq`, in catalog order. */
  async searchFieldsPage(
    catalogId: string,
    afterSeq: number,
    limit: number,
  ): Promise<Array<{ seq: number; asin: string; fields: Record<string, unknown> }>> {
    const result = await sql<{ seq: number; asin: string; fields: Record<string, unknown> }>`
        select seq, asin, json_build_object('Title', product -> 'Title', 'Description', product -> 'Description',
          'BulletPoints', product -> 'BulletPoints', 'options', product -> 'options') as fields
        from webshop_products
        where catalog_id = ${catalogId} and seq > ${afterSeq}
        order by seq
        limit ${limit}
      `.execute(this.db);
    return result.rows;
  }

  /** The id of the catalog imported last. */
  async latestId(): Promise<string | undefined> {
    const row = await this.db
      .selectFrom('webshop_catalogs')
      .select('id')
      .orderBy('imported_at', 'desc')
      .limit(1)
      .executeTakeFirst();
    return row?.id;
  }

  async get(catalogId: string) {
    return this.db
      .selectFrom('webshop_catalogs')
      .selectAll()
      .where('id', '=', catalogId)
      .executeTakeFirst();
  }

  /** Every catalog, the latest import first. */
  async list() {
    return this.db
      .selectFrom('webshop_catalogs')
      .selectAll()
      .orderBy('imported_at', 'desc')
      .execute();
  }

  /** Products in import order (the order the original catalog file had). */
  async products(
    catalogId: string,
  ): Promise<Array<{ asin: string; price: number; product: Record<string, unknown> }>> {
    return this.db
      .selectFrom('webshop_products')
      .select(['asin', 'price', 'product'])
      .where('catalog_id', '=', catalogId)
      .orderBy('seq')
      .execute();
  }

  /** The goals' categories (WebShop's domains), sorted. */
  async categories(catalogId: string): Promise<string[]> {
    const rows = await this.db
      .selectFrom('webshop_goals')
      .select(sql<string>`coalesce(goal->>'category', 'webshop')`.as('category'))
      .distinct()
      .where('catalog_id', '=', catalogId)
      .orderBy('category')
      .execute();
    return rows.map((row) => row.category);
  }

  /** The goals at these indices (those that exist), for a worker fetching goals on demand. */
  async goalsByIndex(
    catalogId: string,
    indices: readonly number[],
  ): Promise<Array<{ goal_index: number; goal: Record<string, unknown> }>> {
    if (indices.length === 0) return [];
    const { rows } = await sql<{ goal_index: number; goal: Record<string, unknown> }>`${prepared}
        select goal_index, goal from webshop_goals where catalog_id = ${catalogId} and goal_index = any(${[...indices]}::int[])`.execute(
      this.db,
    );
    return rows;
  }

  /** Every goal of the catalog, in goal order. */
  async goals(catalogId: string): Promise<StoredGoal[]> {
    return this.db
      .selectFrom('webshop_goals')
      .select(['goal_index', 'split', 'asin', 'instruction', 'goal'])
      .where('catalog_id', '=', catalogId)
      .orderBy('goal_index')
      .execute();
  }
}

/** A product as served: without the keys nothing after the import reads. */
function servedProduct(product: Record<string, unknown>): Record<string, unknown> {
  for (const key of KEYS_NOT_SERVED) delete product[key];
  return product;
}

/** Deletes the catalog with this id (its products, goals and snapshot go with it) and writes the new header, empty. */
async function replaceCatalogHeader(trx: WebshopDatabase, header: CatalogHeader): Promise<void> {
  await trx.deleteFrom('webshop_catalogs').where('id', '=', header.id).execute();
  await trx
    .insertInto('webshop_catalogs')
    .values({
      id: header.id,
      version: header.version,
      source: JSON.stringify(header.source),
      goal_seed: header.goalSeed,
      products: 0,
      goals: 0,
    })
    .execute();
}

/** Writes a page of products after the `written` ones already there; returns how many are written now. */
async function insertProducts(
  trx: WebshopDatabase,
  catalogId: string,
  page: readonly CatalogProductRow[],
  written: number,
): Promise<number> {
  let seq = written;
  for (let i = 0; i < page.length; i += PAGE) {
    const rows = page.slice(i, i + PAGE).map((p) => ({
      catalog_id: catalogId,
      seq: seq++,
      asin: p.asin,
      price: p.price,
      product: JSON.stringify(p.product),
    }));
    await trx.insertInto('webshop_products').values(rows).execute();
  }
  return seq;
}

async function insertGoals(
  trx: WebshopDatabase,
  catalogId: string,
  goals: readonly CatalogGoalRow[],
): Promise<void> {
  for (let i = 0; i < goals.length; i += PAGE) {
    const rows = goals.slice(i, i + PAGE).map((g) => ({
      catalog_id: catalogId,
      goal_index: g.goalIndex,
      split: g.split,
      asin: g.asin,
      instruction: g.instruction,
      goal: JSON.stringify(g.goal),
    }));
    await trx.insertInto('webshop_goals').values(rows).execute();
  }
}

/** Replaces the catalog's stored search snapshot with `upload`, a row per chunk. */
async function writeSearchSnapshot(
  executor: WebshopDatabase,
  catalogId: string,
  upload: SearchSnapshotUpload,
): Promise<void> {
  await executor
    .deleteFrom('webshop_search_snapshots')
    .where('catalog_id', '=', catalogId)
    .execute();
  await executor
    .insertInto('webshop_search_snapshots')
    .values({
      catalog_id: catalogId,
      version: upload.version,
      format: upload.format,
      bytes: upload.bytes,
      sha256: upload.sha256,
      chunks: 0,
    })
    .execute();
  let chunk = 0;
  for await (const data of upload.chunks()) {
    await executor
      .insertInto('webshop_search_snapshot_chunks')
      .values({ catalog_id: catalogId, chunk, data })
      .execute();
    chunk += 1;
  }
  await executor
    .updateTable('webshop_search_snapshots')
    .set({ chunks: chunk })
    .where('catalog_id', '=', catalogId)
    .execute();
}
