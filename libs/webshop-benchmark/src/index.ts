// The WebShop benchmark of the fleet: its descriptor (planning, config, scores, export), catalogs
// imported into Postgres, and a catalog from Postgres as a ready Store for workers and the site.
export * from './webshop-benchmark.js';
export * from './webshop-run-config.js';
export * from './webshop-jsonl-export.js';
export * from './catalog-import.js';
export * from './catalog-download.js';
export * from './catalog-store-loader.js';
export { openCatalogSearchSnapshot } from './catalog-search-snapshot.js';
export * from './llm-endpoint-check.js';
export * from './webshop-catalog-repository.js';
export type { WebshopTables } from './webshop-tables.js';
