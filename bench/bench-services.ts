import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import pg from 'pg';
import { createDatabase, migrateToLatest, type Database } from '@benchfleet/db';
import { benchmarks } from '@benchfleet/benchmarks';
import { provisionServices, type ProvisionedServices } from '@benchfleet/local-services';
import { deleteKeysWithPrefix } from '@benchfleet/testing/test-database';

export interface BenchServices {
  services: ProvisionedServices;
  databaseUrl: string;
  db: Database;
  prefix: string;
  env: NodeJS.ProcessEnv;
  close(): Promise<void>;
}

export interface BenchDatabaseOptions {
  /** A fixed database name, kept by `close` when `keep` is set, so a later run can reuse its data. */
  database?: string;
  keep?: boolean;
}

/** A fresh (or, with a fixed name, reused), migrated database and queue prefix for one benchmark run, dropped afterwards. */
export async function benchServices(
  name: string,
  options: BenchDatabaseOptions = {},
): Promise<BenchServices> {
  const services = await provisionServices({ log: (line) => process.stderr.write(`${line}\n`) });
  const database = options.database ?? `bench_${name}_${randomBytes(3).toString('hex')}`;
  const admin = new pg.Client({ connectionString: services.databaseUrl });
  await admin.connect();
  const exists = await admin.query('select 1 from pg_database where datname = $1', [database]);
  if (exists.rowCount === 0) await admin.query(`create database "${database}"`);
  await admin.end();
  const url = new URL(services.databaseUrl);
  url.pathname = `/${database}`;
  const databaseUrl = url.toString();
  const db = createDatabase(databaseUrl, { max: 8 });
  await migrateToLatest(db, benchmarks.migrations);
  const prefix = `{bench-${randomBytes(3).toString('hex')}}`;
  return {
    services,
    databaseUrl,
    db,
    prefix,
    env: {
      ...process.env,
      DATABASE_URL: databaseUrl,
      REDIS_URL: services.redisUrl,
      BENCHFLEET_QUEUE_PREFIX: prefix,
      LOG_LEVEL: 'warn',
    },
    async close() {
      await db.destroy();
      if (!options.keep) {
        const client = new pg.Client({ connectionString: services.databaseUrl });
        await client.connect();
        await client.query(`drop database if exists "${database}" with (force)`);
        await client.end();
      }
      await deleteKeysWithPrefix(services.redisUrl, prefix);
      await services.stop();
    },
  };
}

export function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN;
}

export function printTable(rows: Record<string, string | number>[]): void {
  const header = Object.keys(rows[0] ?? {});
  const widths = header.map((h) => Math.max(h.length, ...rows.map((row) => String(row[h]).length)));
  const line = (cells: string[]) =>
    cells.map((cell, i) => cell.padStart(widths[i] ?? 0)).join('  ');
  process.stdout.write(
    `${line(header)}\n${rows.map((row) => line(header.map((h) => String(row[h])))).join('\n')}\n`,
  );
}

/**
 * Enqueues a WebShop run with the `scheduler enqueue` of the checkout at `root`, so each build's
 * worker gets the jobs and run config its own code writes (today's worker cannot read an older
 * build's jobs, nor the reverse); returns the run id.
 */
export async function enqueueWithBuild(
  root: string,
  env: NodeJS.ProcessEnv,
  flags: Record<string, string>,
): Promise<string> {
  const args = Object.entries(flags).flatMap(([name, value]) => [
    `--${name.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`,
    value,
  ]);
  const bin = join(root, 'apps/scheduler/bin/scheduler.js');
  const child = spawn(
    process.execPath,
    [bin, 'enqueue', '--benchmark', 'webshop', ...args, '--json'],
    { env, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const code = await new Promise((done) => child.once('exit', done));
  if (code !== 0) throw new Error(`${bin} enqueue exited with ${code}: ${stderr.slice(-2000)}`);
  return (JSON.parse(stdout) as { runId: string }).runId;
}
