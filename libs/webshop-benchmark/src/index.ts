// The WebShop benchmark of the fleet: its descriptor (planning, config, scores, export), catalogs
// imported into Postgres, and a catalog from Postgres as a ready Store for workers and the site.
export * from './webshop-benchmark.js';
export { webshopWorker, webshopWorkerFlags } from './webshop-worker.js';
export * from './webshop-run-config.js';
export * from './webshop-jsonl-export.js';
export * from './catalog-import.js';
export * from './catalog-download.js';
export * from './catalog-store-loader.js';
export {
  CatalogSearchSnapshotBuilder,
  openCatalogSearchSnapshot,
  rebuildCatalogSearchSnapshot,
  SEARCH_SNAPSHOT_FORMAT,
  SearchSnapshotMissingError,
  type BuiltSearchSnapshot,
  type OpenedCatalogSnapshot,
} from './catalog-search-snapshot.js';
export { DEFAULT_PRODUCT_CACHE_ENTRIES, PostgresStoreProducts } from './postgres-store-products.js';
export { DEFAULT_GOAL_CACHE_ENTRIES, PostgresStoreGoals } from './postgres-store-goals.js';
export * from './llm-endpoint-check.js';
export * from './webshop-catalog-repository.js';
export type { WebshopTables, WebshopDatabase } from './webshop-tables.js';
