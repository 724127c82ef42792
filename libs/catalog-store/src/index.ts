// A WebShop catalog from Postgres as a ready Store: shared by the WebShop workers and the site.
// Workers open the catalog's search snapshot and fetch products on demand; the site loads all.

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
