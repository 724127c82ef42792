import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { benchmarks } from '@benchfleet/benchmarks';
import { runCli, withDatabase } from '@benchfleet/testing';

const adminUrl = inject('adminDatabaseUrl');
const name = `benchfleet_empty_${randomBytes(4).toString('hex')}`;
const url = withDatabase(adminUrl, name);

async function admin(query: string): Promise<void> {
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  await client.query(query);
  await client.end();
}

async function relations(): Promise<Array<{ table_name: string; table_type: string }>> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  const result = await client.query<{ table_name: string; table_type: string }>(
    "select table_name, table_type from information_schema.tables where table_schema = 'public' order by table_name",
  );
  await client.end();
  return result.rows;
}

afterAll(async () => {
  await admin(`drop database if exists "${name}" with (force)`);
});

describe('scheduler migrate', () => {
  it('creates the four tables and the views on an empty database; a second run changes nothing', async () => {
    await admin(`create database "${name}"`);
    const env = { ...process.env, DATABASE_URL: url };
    const first = await runCli('scheduler', ['migrate'], env);
    expect(first.code).toBe(0);
    expect(first.stdout).toMatch(
      new RegExp(`^applied ${Object.keys(benchmarks.migrations).length} migration\\(s\\)`),
    );
    const after = await relations();
    const tables = after.filter((r) => r.table_type === 'BASE TABLE').map((r) => r.table_name);
    const views = after.filter((r) => r.table_type === 'VIEW').map((r) => r.table_name);
    expect(tables).toEqual(
      expect.arrayContaining(['runs', 'tasks', 'attempts', 'steps', 'webshop_search_snapshots']),
    );
    expect(views).toEqual(expect.arrayContaining(['run_summary', 'domain_summary']));

    const second = await runCli('scheduler', ['migrate'], env);
    expect(second.code).toBe(0);
    expect(second.stdout).toBe('schema is up to date\n');
    expect(await relations()).toEqual(after);
  });
});
