// Public face of the webshop store: the shared Store, per-agent Episodes, pages and observations,
// the HTTP site, and the store's fixture runners.
export {
  catalogEntryOf,
  createCatalogStore,
  createStoreOver,
  storeGoalFromWebshopGoal,
  storeSearchFromIndex,
  type CatalogStoreProduct,
  type StoreCatalog,
} from './catalog-store.js';
export { Episode, type ObservationMode } from './episode.js';
export { createStoreHttpServer } from './http-server.js';
export {
  Store,
  type CatalogEntry,
  type ProductFilter,
  type StoreProducts,
  type StoreGoal,
  type StoreGoals,
} from './store.js';
export { replayEnvEpisodes, storeFixtureRunners } from './store-fixture.js';
