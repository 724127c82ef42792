import { readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { sql, type Kysely } from 'kysely';
import { describe, expect, it } from 'vitest';
import { benchmarks } from '@benchfleet/benchmarks';
import { coreMigrations } from '@benchfleet/migrations';
import { useTestServices } from '@benchfleet/testing';
import { createDatabase } from './database.js';
import { MigrationFailedError, migrateToLatest } from './migrate.js';

const services = useTestServices();

describe('migrations', () => {
  it('lists every migration file in migrations/index.ts, in file order', () => {
    const dir = fileURLToPath(new URL('../../../migrations/', import.meta.url));
    const files = readdirSync(dir)
      .filter((file) => /^\d{14}_.+\.ts$/.test(file) && !file.endsWith('.test.ts'))
      .map((file) => file.replace(/\.ts$/, ''))
      .sort();
    expect(Object.keys(coreMigrations)).toEqual(files);
  });

  it('creates the four tables and the analysis views; a second run changes nothing', async () => {
    // The per-file database is cloned from an already migrated template.
    const tables = await sql<{ table_name: string; table_type: string }>`
      select table_name, table_type from information_schema.tables where table_schema = 'public' order by table_name
    `.execute(services.db);
    const byType = (type: string) =>
      tables.rows.filter((row) => row.table_type === type).map((row) => row.table_name);
    expect(byType('BASE TABLE')).toEqual(
      expect.arrayContaining(['runs', 'tasks', 'attempts', 'steps']),
    );
    expect(byType('VIEW')).toEqual(expect.arrayContaining(['run_summary', 'domain_summary']));

    const before = await sql<{
      n: number;
    }>`select count(*)::int as n from benchfleet_migrations`.execute(services.db);
    const report = await migrateToLatest(services.db, benchmarks.migrations);
    expect(report.applied).toEqual([]);
    const after = await sql<{
      n: number;
    }>`select count(*)::int as n from benchfleet_migrations`.execute(services.db);
    expect(after.rows[0]?.n).toBe(before.rows[0]?.n);
  });

  it('names the migration that failed and applies nothing after it', async () => {
    const db = createDatabase(services.databaseUrl, { max: 1 });
    try {
      const broken = {
        ...benchmarks.migrations,
        '29990101000000_broken': {
          up: async (trx: Kysely<any>) => void (await sql`create table runs (id int)`.execute(trx)),
        },
        '29990102000000_after': {
          up: async (trx: Kysely<any>) =>
            void (await sql`create table never_created (id int)`.execute(trx)),
        },
      };
      await expect(migrateToLatest(db, broken)).rejects.toThrow(MigrationFailedError);
      await expect(migrateToLatest(db, broken)).rejects.toThrow(
        /migration 29990101000000_broken failed: .*already exists/,
      );
      const exists = await sql<{
        n: number;
      }>`select count(*)::int as n from information_schema.tables where table_name = 'never_created'`.execute(
        db,
      );
      expect(exists.rows[0]?.n).toBe(0);
    } finally {
      await db.destroy();
    }
  });
});
