// A catalogue import the way a user runs it: `scheduler migrate` then `scheduler webshop import`
// of the checkout at `root` (this one, or an older one for a side-by-side baseline), into a
// database of its own, timed whole-process: wall time and the importing process's CPU.

import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import type { CatalogFiles } from './catalog-files.js';

export interface SchedulerImport {
  readonly seconds: number;
  /** CPU (user + system) of the `scheduler webshop import` process. */
  readonly cpuSeconds: number;
  readonly products: number;
  readonly goals: number;
}

/** Writes the process's CPU time to $BENCH_CPU_FILE as it exits. */
const CPU_AT_EXIT =
  "data:text/javascript,import { writeFileSync } from 'node:fs'; process.on('exit', () => { const u = process.cpuUsage(); if (process.env.BENCH_CPU_FILE) writeFileSync(process.env.BENCH_CPU_FILE, String((u.user + u.system) / 1e6)); });";

async function run(root: string, args: string[], env: NodeJS.ProcessEnv): Promise<void> {
  const child = spawn(
    process.execPath,
    ['--import', CPU_AT_EXIT, join(root, 'apps/scheduler/bin/scheduler.js'), ...args],
    { env, stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr = (stderr + chunk.toString()).slice(-4000)));
  const [code] = (await once(child, 'exit')) as [number | null];
  if (code !== 0)
    throw new Error(`scheduler ${args.join(' ')} (${root}) exited ${code}: ${stderr}`);
}

/** Imports `files` with the scheduler of `root` into a new database `database`, dropped afterwards. */
export async function importWithScheduler(
  root: string,
  serverUrl: string,
  database: string,
  files: CatalogFiles,
): Promise<SchedulerImport> {
  const admin = new pg.Client({ connectionString: serverUrl });
  await admin.connect();
  const url = new URL(serverUrl);
  url.pathname = `/${database}`;
  const cpuDir = mkdtempSync(join(tmpdir(), 'bench-import-cpu-'));
  try {
    await admin.query(`drop database if exists "${database}" with (force)`);
    await admin.query(`create database "${database}"`);
    const env = { ...process.env, DATABASE_URL: url.toString(), LOG_LEVEL: 'warn' };
    await run(root, ['migrate'], env);
    const cpuFile = join(cpuDir, 'cpu');
    const started = performance.now();
    await run(
      root,
      [
        'webshop',
        'import',
        '--items',
        files.items,
        '--attributes',
        files.attributes,
        '--human',
        files.human,
        '--seed',
        '0',
        '--catalog-id',
        'bench',
      ],
      { ...env, BENCH_CPU_FILE: cpuFile },
    );
    const seconds = (performance.now() - started) / 1000;
    const client = new pg.Client({ connectionString: url.toString() });
    await client.connect();
    const counts = await client.query<{ products: number; goals: number }>(
      "select products, goals from webshop_catalogs where id = 'bench'",
    );
    await client.end();
    return {
      seconds,
      cpuSeconds: Number(readFileSync(cpuFile, 'utf8')),
      products: Number(counts.rows[0]?.products),
      goals: Number(counts.rows[0]?.goals),
    };
  } finally {
    await admin.query(`drop database if exists "${database}" with (force)`);
    await admin.end();
    rmSync(cpuDir, { recursive: true, force: true });
  }
}
