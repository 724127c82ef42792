import { UsageError } from '@benchfleet/core';
import type { Database } from '@benchfleet/db';
import { WebshopCatalogRepository } from './webshop-catalog-repository.js';

/**
 * The catalog a command names (`--catalog`), else the latest imported; none imported, or one not in
 * Postgres, is bad input that says what to do. Enqueue and the catalog tools both ask here.
 */
export async function resolveCatalog(db: Database, named: string | undefined) {
  const catalogs = new WebshopCatalogRepository(db);
  const catalogId = named ?? (await catalogs.latestId());
  if (!catalogId)
    throw new UsageError(
      'no WebShop catalog in Postgres: run `scheduler webshop import --demo` (or `scheduler webshop download`) first',
    );
  const catalog = await catalogs.get(catalogId);
  if (!catalog) {
    const known = (await catalogs.list()).map((stored) => stored.id);
    throw new UsageError(
      `--catalog ${catalogId} not found; imported catalogs: ${known.join(', ') || 'none'}`,
    );
  }
  return catalog;
}
