export {
  DEMO_CATALOG_SIZE,
  generateDemoCatalog,
  generateDemoProduct,
  generateDemoProducts,
  type DemoAttributeEntry,
  type DemoCatalog,
  type DemoCatalogOptions,
  type DemoCatalogRecord,
  type DemoHumanInstruction,
  type DemoRawOptionValue,
  type DemoRawProduct,
} from './demo-catalog.js';
export { DEMO_PRODUCT_GROUPS, type DemoCategory } from './product-groups.js';
