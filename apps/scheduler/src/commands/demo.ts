import { spawn, type ChildProcess } from 'node:child_process';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type { Command } from 'commander';
import { sql } from 'kysely';
import { positiveInteger } from '@benchfleet/core';
import { readRunSummary, type BenchmarkRegistry, type RunSummary } from '@benchfleet/benchmark-kit';
import {
  createDatabase,
  migrateToLatest,
  runsRepository,
  webshopCatalogRepository,
  type Database,
} from '@benchfleet/db';
import { migrations } from '@benchfleet/migrations';
import { JobProducer } from '@benchfleet/queue';
import { provisionServices } from '@benchfleet/local-services';
import {
  enqueueRun,
  EXAMPLE_QUERIES,
  planRun,
  readRunStatus,
  summaryMarkdown,
} from '@benchfleet/runs';
import { demoCatalogRequest, importWebshopCatalog } from '@benchfleet/webshop-benchmark';
import { parsedOption } from '../cli-options.js';
import { followRun } from './status.js';
import { formatTable } from './runs.js';

interface DemoFlags {
  episodes: number;
  workers: number;
  concurrency: number;
  keep?: boolean;
}

// Found through the workspace links, which hold whether this runs from the sources or the bundle.
const require = createRequire(import.meta.url);
const appBin = (app: string): string =>
  join(dirname(require.resolve(`@benchfleet/${app}/package.json`)), 'bin', `${app}.js`);
const WORKER_WEBSHOP_BIN = appBin('worker-webshop');
const SCHEDULER_BIN = appBin('scheduler');

function say(line: string): void {
  process.stderr.write(`${line}\n`);
}

function startChild(bin: string, args: string[], env: NodeJS.ProcessEnv): ChildProcess {
  const child = spawn(process.execPath, [bin, ...args], {
    env,
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let tail = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    tail = (tail + chunk.toString()).slice(-2_000);
  });
  child.once('exit', (code) => {
    if (code !== 0 && code !== null)
      say(
        `a ${bin.replace(/^.*\//, '')} process exited with ${code}: ${tail.trim().split('\n').pop() ?? ''}`,
      );
  });
  return child;
}

async function waitForSummary(
  db: Database,
  runId: string,
  timeoutMs = 60_000,
): Promise<RunSummary> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const run = await runsRepository(db).get(runId);
    const summary = readRunSummary(run?.summary);
    if (summary && summary.pending === 0) return summary;
    if (Date.now() > end)
      throw new Error(
        `the aggregate job did not summarise run ${runId} within ${timeoutMs / 1000}s`,
      );
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

export function configureDemo(command: Command, registry: BenchmarkRegistry): void {
  command
    .addOption(
      parsedOption(
        '--episodes <n>',
        'how many WebShop episodes (default 100)',
        positiveInteger,
      ).default(100),
    )
    .addOption(
      parsedOption(
        '--workers <n>',
        'worker-webshop processes (default 2)',
        positiveInteger,
      ).default(2),
    )
    .addOption(
      parsedOption(
        '--concurrency <n>',
        'episodes at once per worker (default 16)',
        positiveInteger,
      ).default(16),
    )
    .option('--keep', 'leave services and workers running until Ctrl-C, to query the results')
    .action(async (flags: DemoFlags) => {
      const started = Date.now();
      say(
        'benchfleet demo: finding Postgres and Redis (DATABASE_URL/REDIS_URL, else Docker, else embedded Postgres and redis-server)…',
      );
      const services = await provisionServices({ log: say });
      say(`  Postgres: ${services.source.postgres}; Redis: ${services.source.redis}`);
      const prefix = process.env.BENCHFLEET_QUEUE_PREFIX || '{benchfleet}';
      const db = createDatabase(services.databaseUrl, { max: 4 });
      const producer = new JobProducer(services.redisUrl, prefix);
      const children: ChildProcess[] = [];
      try {
        const { applied } = await migrateToLatest(db, migrations);
        say(`schema: ${applied.length ? `applied ${applied.join(', ')}` : 'up to date'}`);
        if (!(await webshopCatalogRepository(db).get('demo'))) {
          const report = await importWebshopCatalog(db, demoCatalogRequest({ seed: 0 }));
          say(
            `catalog: generated and imported the demo catalog (${report.products} products, ${report.goals} goals)`,
          );
        } else {
          say('catalog: demo catalog already imported');
        }

        const env = {
          ...process.env,
          DATABASE_URL: services.databaseUrl,
          REDIS_URL: services.redisUrl,
          BENCHFLEET_QUEUE_PREFIX: prefix,
          LOG_LEVEL: process.env.LOG_LEVEL ?? 'warn',
        };
        for (let i = 0; i < flags.workers; i += 1) {
          children.push(
            startChild(
              WORKER_WEBSHOP_BIN,
              [
                '--concurrency',
                String(flags.concurrency),
                '--catalog',
                'demo',
                '--worker-id',
                `demo-webshop-${i + 1}`,
              ],
              env,
            ),
          );
        }
        children.push(startChild(SCHEDULER_BIN, ['worker', '--worker-id', 'demo-aggregate'], env));
        say(
          `workers: ${flags.workers} worker-webshop process(es) × concurrency ${flags.concurrency}, 1 aggregate worker`,
        );

        const plan = await planRun(
          registry,
          {
            benchmark: 'webshop',
            domains: [],
            maxTasks: flags.episodes,
            runName: 'demo-webshop-rule',
            flags: { catalog: 'demo', split: 'test', agent: 'rule' },
          },
          { db, env: process.env },
        );
        const runId = await enqueueRun({ db, producer }, plan);
        say(`run ${runId}: ${plan.tasks.length} episodes enqueued`);
        await followRun(
          db,
          producer,
          registry,
          services.redisUrl,
          prefix,
          await readRunStatus(db, producer, registry, runId),
        );
        const summary = await waitForSummary(db, runId);
        process.stdout.write(`\n${summaryMarkdown(summary, plan.name)}\n`);
        process.stdout.write('Look further with SQL (these ran against the demo database):\n\n');
        for (const query of EXAMPLE_QUERIES.slice(0, 3)) {
          const rows = await sql
            .raw(
              query.sql.replaceAll(":'run'", `'${runId}'`).replaceAll(":'other_run'", `'${runId}'`),
            )
            .execute(db);
          process.stdout.write(`-- ${query.title}\n${query.sql.trim()}\n`);
          const records = rows.rows as Record<string, unknown>[];
          const header = Object.keys(records[0] ?? {});
          process.stdout.write(
            `${formatTable(
              header,
              records.slice(0, 8).map((row) => header.map((h) => String(row[h] ?? ''))),
            )}\n`,
          );
        }
        say(`demo finished in ${((Date.now() - started) / 1000).toFixed(1)} s`);
        const yours =
          services.source.postgres === 'environment' && services.source.redis === 'environment';
        // Your own URLs are not printed (they may hold a password); the demo's throwaway ones are.
        const urls = yours
          ? ''
          : `DATABASE_URL=${services.databaseUrl} REDIS_URL=${services.redisUrl} `;
        process.stdout.write(
          `\nLook at this run in the dashboard${yours || flags.keep ? '' : ' (run the demo with --keep so that its services stay up)'}:\n` +
            `  ${urls}BENCHFLEET_QUEUE_PREFIX='${prefix}' npx dashboard\n` +
            `  then open http://127.0.0.1:8080/runs/${runId}\n`,
        );
        if (flags.keep) {
          say(
            `services stay up until Ctrl-C: DATABASE_URL=${services.databaseUrl} REDIS_URL=${services.redisUrl}`,
          );
          await new Promise<void>((resolve) => process.once('SIGINT', () => resolve()));
        }
      } finally {
        for (const child of children) child.kill('SIGTERM');
        await Promise.all(
          children.map(
            (child) =>
              new Promise((resolve) =>
                child.exitCode !== null ? resolve(null) : child.once('exit', resolve),
              ),
          ),
        );
        await producer.close();
        await db.destroy();
        await services.stop();
      }
    });
}
