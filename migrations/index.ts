import type { Migration } from 'kysely';
import * as coreTables from './20261122000000_core_tables.js';
import * as webshopCatalog from './20261122000100_webshop_catalog.js';
import * as benchmarkRegistry from './20261124100000_benchmark_registry.js';
import * as webshopSearchSnapshots from './20261124130000_webshop_search_snapshots.js';
import * as settledTaskNumbers from './20261126210000_settled_task_numbers.js';
import * as workerHealth from './20261126220000_worker_health.js';
import * as osworldGrades from './20261126230000_osworld_grades.js';
import * as taskTextSearch from './20261126240000_task_text_search.js';

// Listed by hand so the migrator needs no file-system scan; a test checks every file is listed.
export const migrations: Record<string, Migration> = {
  '20261122000000_core_tables': coreTables,
  '20261122000100_webshop_catalog': webshopCatalog,
  '20261124100000_benchmark_registry': benchmarkRegistry,
  '20261124130000_webshop_search_snapshots': webshopSearchSnapshots,
  '20261126210000_settled_task_numbers': settledTaskNumbers,
  '20261126220000_worker_health': workerHealth,
  '20261126230000_osworld_grades': osworldGrades,
  '20261126240000_task_text_search': taskTextSearch,
};
