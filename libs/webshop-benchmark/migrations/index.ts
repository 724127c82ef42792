import type { Migration } from 'kysely';
import * as webshopCatalog from './20261122000100_webshop_catalog.js';
import * as webshopSearchSnapshots from './20261124130000_webshop_search_snapshots.js';

// WebShop's tables (catalogs, products, goals, search snapshots), merged with the core migrations
// by the registry. Their names stay as first released: `benchfleet_migrations` remembers them.
// Listed by hand so the migrator needs no file-system scan; a test checks every file is listed.
export const webshopMigrations: Record<string, Migration> = {
  '20261122000100_webshop_catalog': webshopCatalog,
  '20261124130000_webshop_search_snapshots': webshopSearchSnapshots,
};
