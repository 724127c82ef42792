// Public face of the webshop store: the shared Store, per-agent Episodes, pages and observations,
// the HTTP site, and the store's fixture runners.
export {
  catalogEntryOf,
  createCatalogStore,
  createStoreOver,
  rewardScorer,
  storeGoalFromWebshopGoal,
  storeGoalsOf,
  storeSearchFromIndex,
  type CatalogStoreOptions,
  type CatalogStoreProduct,
  type StoreCatalog,
} from './catalog-store.js';
export {
  Episode,
  parseAction,
  type AvailableActions,
  type EpisodeOptions,
  type ObservationMode,
  type PurchaseInfo,
  type StepResult,
} from './episode.js';
export {
  richTextFromNodes,
  simpleTextFromNodes,
  visibleTextNodes,
  type RichTextContext,
  type VisibleTextNode,
} from './html-to-text.js';
export { createStoreHttpServer, type StoreHttpServerOptions } from './http-server.js';
export {
  siteLinks,
  textEnvironmentLinks,
  type PageLinks,
  type SelectedOptions,
  type SubPageName,
} from './page-links.js';
export {
  renderPageHtml,
  type DonePageDetails,
  type DonePageView,
  type ItemPageView,
  type PageView,
  type ResultsPageView,
  type SearchPageView,
  type SubPageView,
} from './page-templates.js';
export { parsePythonLiteral, PythonLiteralError, type PythonLiteral } from './python-literal.js';
export {
  createStore,
  InMemoryStoreGoals,
  InMemoryStoreProducts,
  SEARCH_RETURN_N,
  Store,
  type CatalogEntry,
  type ProductFilter,
  type StoreProducts,
  type PurchaseScore,
  type PurchaseToScore,
  type ScorePurchase,
  type StoreConfig,
  type StoreGoal,
  type StoreGoals,
  type StoreSearch,
} from './store.js';
export {
  storeProductFromProcessed,
  type ProcessedProduct,
  type StoreProduct,
  type StoreProductOption,
} from './store-product.js';
export {
  envEpisodeStepsFixtureRunner,
  htmlMockTextObservationsFixtureRunner,
  replayEnvEpisodes,
  type FixtureStoreFactory,
  runStoreFixture,
  storeFixtureRunners,
} from './store-fixture.js';
