import type { Generated, Kysely } from 'kysely';
import type { DB, Json, Timestamp } from '@benchfleet/db';

// The WebShop benchmark's own tables (its migrations: ../migrations), beside the shared ones.

interface WebshopCatalogsTable {
  id: string;
  source: Json;
  goal_seed: number;
  products: number;
  goals: number;
  imported_at: Timestamp;
  /** New on every import of the id: decides which search snapshot is current. */
  version: Generated<string>;
}

interface WebshopSearchSnapshotsTable {
  catalog_id: string;
  version: string;
  format: number;
  bytes: number;
  sha256: string;
  chunks: number;
  built_at: Generated<Timestamp>;
}

interface WebshopSearchSnapshotChunksTable {
  catalog_id: string;
  chunk: number;
  data: Buffer;
}

interface WebshopProductsTable {
  catalog_id: string;
  seq: number;
  asin: string;
  price: number;
  product: Json;
}

interface WebshopGoalsTable {
  catalog_id: string;
  goal_index: number;
  split: 'test' | 'eval' | 'train';
  asin: string;
  instruction: string;
  goal: Json;
}

/** WebShop's tables, as `db.withTables<WebshopTables>()` adds them to the shared ones. */
// A type, not an interface: Kysely's withTables wants an index-signature-compatible record.
export type WebshopTables = {
  webshop_catalogs: WebshopCatalogsTable;
  webshop_products: WebshopProductsTable;
  webshop_goals: WebshopGoalsTable;
  webshop_search_snapshots: WebshopSearchSnapshotsTable;
  webshop_search_snapshot_chunks: WebshopSearchSnapshotChunksTable;
};

export type WebshopDatabase = Kysely<DB & WebshopTables>;
