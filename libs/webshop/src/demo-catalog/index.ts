export { DEMO_CATALOG_SIZE, generateDemoCatalog, generateDemoProducts } from './demo-catalog.js';
