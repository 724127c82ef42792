import { readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { coreMigrations } from '@benchfleet/migrations';
import { webshopMigrations } from '../migrations/index.js';
import { webshopBenchmark } from './webshop-benchmark.js';

describe("WebShop's tables", () => {
  it('lists every migration file of its migrations folder, under the names first released', () => {
    const dir = fileURLToPath(new URL('../migrations/', import.meta.url));
    const files = readdirSync(dir)
      .filter((file) => /^\d{14}_.+\.ts$/.test(file))
      .map((file) => file.replace(/\.ts$/, ''))
      .sort();
    expect(Object.keys(webshopMigrations)).toEqual(files);
    // benchfleet_migrations remembers these names: renaming one would run it again.
    expect(files).toEqual([
      '20261122000100_webshop_catalog',
      '20261124130000_webshop_search_snapshots',
    ]);
    expect(webshopBenchmark.migrations).toBe(webshopMigrations);
    expect(Object.keys(coreMigrations).filter((name) => name.includes('webshop'))).toEqual([]);
  });
});
