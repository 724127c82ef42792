// Public face of the webshop catalog: product loading, hidden prices, goals, CPython random.
export { readInstructionFiles, streamRawItems, type CatalogFilePaths } from './catalog-files.js';
export { streamWebshopCatalog, type StreamedCatalog } from './catalog-stream.js';
export {
  attributeEntrySchema,
  humanInstructionSchema,
  rawProductSchema,
  webshopGoalSchema,
  webshopProductSchema,
  type WebshopGoal,
} from './catalog-schemas.js';
export { NO_PRICE_LIMIT, webshopGoalSplit } from './goals.js';
export { rawItemsOf, type CatalogSource } from './load-products.js';
export {
  comparePythonStrings,
  pythonFloatRepr,
  pythonStrip,
  pythonStrRepr,
} from './python-text.js';
export { buildWebshopCatalog, type PricedProduct } from './webshop-catalog.js';
