import { spawn, type ChildProcess } from 'node:child_process';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type { Command } from 'commander';
import type { Database } from '@benchfleet/db';
import type { RunSummary } from '../run-summary.js';

interface DemoFlags {
  episodes: number;
  workers: number;
  concurrency: number;
  keep?: boolean;
}

// Found through the workspace links, which hold whether this runs from the sources or the bundle.
const require = createRequire(import.meta.url);
const appBin = (app: string): string => join(dirname(require.resolve(`@benchfleet/${app}/package.json`)), 'bin', `${app}.js`);

function say(line: string): void {
  process.stderr.write(`${line}\n`);
}

function startChild(bin: string, args: string[], env: NodeJS.ProcessEnv): ChildProcess {
  const child = spawn(process.execPath, [bin, ...args], { env, stdio: ['ignore', 'ignore', 'pipe'] });
  let tail = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    tail = (tail + chunk.toString()).slice(-2_000);
  });
  child.once('exit', (code) => {
    if (code !== 0 && code !== null) say(`a ${bin.replace(/^.*\//, '')} process exited with ${code}: ${tail.trim().split('\n').pop() ?? ''}`);
  });
  return child;
}

async function waitForSummary(db: Database, runId: string, timeoutMs = 60_000): Promise<RunSummary> {
  const { runsRepository } = await import('@benchfleet/db');
  const end = Date.now() + timeoutMs;
  for (;;) {
    const run = await runsRepository(db).get(runId);
    const summary = run?.summary as unknown as RunSummary | null;
    if (summary && summary.pending === 0) return summary;
    if (Date.now() > end) throw new Error(`the aggregate job did not summarise run ${runId} within ${timeoutMs / 1000}s`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

export function registerDemo(program: Command): void {
  program
    .command('demo')
    .description('the whole fleet on one machine: services, schema, demo catalog, workers, a WebShop run with the rule agent, its summary')
    .option('--episodes <n>', 'how many WebShop episodes', Number, 100)
    .option('--workers <n>', 'worker-webshop processes', Number, 2)
    .option('--concurrency <n>', 'episodes at once per worker', Number, 16)
    .option('--keep', 'leave services and workers running until Ctrl-C, to query the results')
    .action(async (flags: DemoFlags) => {
      const started = Date.now();
      const [
        { sql },
        { createDatabase, migrateToLatest, webshopCatalogRepository },
        { migrations },
        { JobProducer },
        { provisionServices },
        { followRun, readRunStatus },
        { demoCatalogRequest, importWebshopCatalog },
        { enqueueRun },
        { planWebshopRun },
        { summaryMarkdown },
        { EXAMPLE_QUERIES },
        { formatTable },
      ] = await Promise.all([
        import('kysely'),
        import('@benchfleet/db'),
        import('@benchfleet/migrations'),
        import('@benchfleet/queue'),
        import('@benchfleet/testing/services'),
        import('./status.js'),
        import('../webshop-catalog-import.js'),
        import('../run-enqueuer.js'),
        import('../run-planning.js'),
        import('../run-summary.js'),
        import('../example-queries.js'),
        import('./runs.js'),
      ]);
      say('benchfleet demo: finding Postgres and Redis (DATABASE_URL/REDIS_URL, else Docker, else embedded Postgres and redis-server)…');
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
          say(`catalog: generated and imported the demo catalog (${report.products} products, ${report.goals} goals)`);
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
          children.push(startChild(appBin('worker-webshop'), ['--concurrency', String(flags.concurrency), '--catalog', 'demo', '--worker-id', `demo-webshop-${i + 1}`], env));
        }
        children.push(startChild(appBin('scheduler'), ['worker', '--worker-id', 'demo-aggregate'], env));
        say(`workers: ${flags.workers} worker-webshop process(es) × concurrency ${flags.concurrency}, 1 aggregate worker`);

        const plan = await planWebshopRun(db, { domain: [], catalog: 'demo', split: 'test', agent: 'rule', maxTasks: flags.episodes, runName: 'demo-webshop-rule' });
        const runId = await enqueueRun({ db, producer }, plan);
        say(`run ${runId}: ${plan.tasks.length} episodes enqueued`);
        await followRun(db, producer, services.redisUrl, prefix, await readRunStatus(db, producer, runId));
        const summary = await waitForSummary(db, runId);
        process.stdout.write(`\n${summaryMarkdown(summary, plan.name)}\n`);
        process.stdout.write('Look further with SQL (these ran against the demo database):\n\n');
        for (const query of EXAMPLE_QUERIES.slice(0, 3)) {
          const rows = await sql.raw(query.sql.replaceAll(':run', `'${runId}'`).replaceAll(':other_run', `'${runId}'`)).execute(db);
          process.stdout.write(`-- ${query.title}\n${query.sql.trim()}\n`);
          const records = rows.rows as Record<string, unknown>[];
          const header = Object.keys(records[0] ?? {});
          process.stdout.write(`${formatTable(header, records.slice(0, 8).map((row) => header.map((h) => String(row[h] ?? ''))))}\n`);
        }
        say(`demo finished in ${((Date.now() - started) / 1000).toFixed(1)} s`);
        if (flags.keep) {
          say(`services stay up until Ctrl-C: DATABASE_URL=${services.databaseUrl} REDIS_URL=${services.redisUrl}`);
          await new Promise<void>((resolve) => process.once('SIGINT', () => resolve()));
        }
      } finally {
        for (const child of children) child.kill('SIGTERM');
        await Promise.all(children.map((child) => new Promise((resolve) => (child.exitCode !== null ? resolve(null) : child.once('exit', resolve)))));
        await producer.close();
        await db.destroy();
        await services.stop();
      }
    });
}
