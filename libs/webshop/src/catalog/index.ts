// Public face of the webshop catalog: product loading, hidden prices, goals, CPython random.
export { CatalogFormatError, type CatalogRecordRef } from './catalog-format-error.js';
export {
  loadCatalogFiles,
  readCatalogJsonFile,
  readInstructionFiles,
  streamRawItems,
  type CatalogFilePaths,
  type RawItemsStream,
} from './catalog-files.js';
export {
  streamWebshopCatalog,
  type StreamCatalogOptions,
  type StreamedCatalog,
} from './catalog-stream.js';
export {
  attributeEntrySchema,
  humanInstructionSchema,
  rawProductSchema,
  webshopGoalOptionsSchema,
  webshopGoalSchema,
  webshopProductSchema,
  type AttributeEntry,
  type HumanInstruction,
  type RawWebshopProduct,
  type WebshopGoal,
  type WebshopGoalOptions,
  type WebshopProduct,
} from './catalog-schemas.js';
export {
  drawPriceLimit,
  getHumanGoals,
  getSyntheticGoals,
  GOAL_ORDER_SEED,
  NO_PRICE_LIMIT,
  orderGoalsLikeWebshop,
  PRICE_RANGE,
  WEBSHOP_GOAL_SPLITS,
  webshopGoalSplit,
  type HumanGoals,
  type PriceLimit,
  type WebshopGoalSplit,
} from './goals.js';
export {
  carriesGoals,
  DUMMY_ATTR,
  indexProducts,
  loadProducts,
  parseInstructionFiles,
  ProductCleaner,
  rawItemsOf,
  type CatalogSource,
  type GoalMode,
  type LoadedProducts,
  type LoadProductsOptions,
} from './load-products.js';
export {
  DEFAULT_PRODUCT_PRICE,
  drawHiddenPrice,
  generateProductPrices,
  parsePricing,
  type ParsedPricing,
} from './product-prices.js';
export { PythonRandom, type PythonSeed } from './python-random.js';
export {
  comparePythonStrings,
  pythonFloatRepr,
  pythonRound,
  pythonSplitWhitespace,
  pythonStrip,
  pythonStrRepr,
  pythonTupleRepr,
} from './python-text.js';
export {
  buildWebshopCatalog,
  CatalogBuilder,
  type BuildWebshopCatalogOptions,
  type PricedProduct,
  type WebshopCatalog,
} from './webshop-catalog.js';
