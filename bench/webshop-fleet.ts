// End-to-end WebShop throughput (enqueue → worker processes → Postgres).
// Run: npx tsx bench/webshop-fleet.ts [--episodes 3000]
// Prints episodes/s for the rule agent with 1 and 2 worker processes, and for the LLM agent
// against the fake OpenAI-compatible server at 300 ms per call with concurrency 1, 8 and 64.
import { parseArgs } from 'node:util';
import { JobProducer } from '@benchfleet/queue';
import { enqueueTestRun, startCli, startFakeLlm, waitFor, type StartedProcess } from '@benchfleet/testing';
import { demoCatalogRequest, importWebshopCatalog } from '@benchfleet/webshop-benchmark';
import { benchServices, printTable } from './bench-services.js';

const { values } = parseArgs({ options: { episodes: { type: 'string', default: '3000' }, 'llm-episodes': { type: 'string', default: '' } } });
const ruleEpisodes = Number(values.episodes);
const LLM_LATENCY_MS = 300;

const bench = await benchServices('fleet');
const producer = new JobProducer(bench.services.redisUrl, bench.prefix);
const llm = await startFakeLlm({ latencyMs: LLM_LATENCY_MS });
const rows: Record<string, string | number>[] = [];

async function startWorkers(count: number, concurrency: number): Promise<StartedProcess[]> {
  const workers = Array.from({ length: count }, (_, i) =>
    startCli('worker-webshop', ['--worker-id', `bench-${i}`, '--concurrency', String(concurrency), '--catalog', 'bench'], { ...bench.env, LOG_LEVEL: 'info' }),
  );
  await waitFor('workers to be ready', () => workers.every((w) => w.output().includes('worker ready')), 60_000, 50);
  return workers;
}

async function stopWorkers(workers: StartedProcess[]): Promise<void> {
  for (const worker of workers) worker.child.kill('SIGTERM');
  await Promise.all(workers.map((worker) => worker.exited));
}

async function measure(label: string, flags: Record<string, string>, episodes: number, expectedPerSecond?: number): Promise<void> {
  const started = performance.now();
  const runId = await enqueueTestRun({ db: bench.db, producer }, { benchmark: 'webshop', flags: { catalog: 'bench', goals: `0-${episodes - 1}`, ...flags } });
  const { steps } = await waitFor(
    `run ${runId}`,
    async () => {
      const row = await bench.db
        .selectFrom('tasks')
        .select((eb) => [eb.fn.countAll<number>().as('open'), eb.fn.sum<number>('total_steps').as('steps')])
        .where('run_id', '=', runId)
        .where('status', 'in', ['queued', 'running'])
        .executeTakeFirstOrThrow();
      if (Number(row.open) > 0) return undefined;
      const total = await bench.db
        .selectFrom('tasks')
        .select((eb) => eb.fn.sum<number>('total_steps').as('steps'))
        .where('run_id', '=', runId)
        .executeTakeFirstOrThrow();
      return { steps: Number(total.steps) };
    },
    30 * 60_000,
    25,
  );
  const seconds = (performance.now() - started) / 1000;
  const rate = episodes / seconds;
  rows.push({
    setup: label,
    episodes,
    steps,
    seconds: seconds.toFixed(2),
    'episodes/s': rate.toFixed(1),
    ...(expectedPerSecond ? { 'ideal/s': expectedPerSecond.toFixed(1), 'of ideal': `${((rate / expectedPerSecond) * 100).toFixed(0)}%` } : { 'ideal/s': '-', 'of ideal': '-' }),
  });
  process.stderr.write(`${label}: ${rate.toFixed(1)} episodes/s\n`);
}

try {
  // Enough goals for every run: the demo generator at 10k products gives several thousand.
  const report = await importWebshopCatalog(bench.db, demoCatalogRequest({ seed: 0, products: 12_000, catalogId: 'bench' }));
  const available = report.goals;
  const episodes = Math.min(ruleEpisodes, available);
  process.stderr.write(`catalog: ${report.products} products, ${report.goals} goals\n`);

  for (const processes of [1, 2]) {
    const workers = await startWorkers(processes, 32);
    await measure(`rule, ${processes} worker process(es) × 32`, { agent: 'rule' }, episodes);
    await stopWorkers(workers);
  }

  // One LLM episode of the rule policy is 3 calls: search, click, buy.
  const episodeSeconds = (3 * LLM_LATENCY_MS) / 1000;
  for (const concurrency of [1, 8, 64]) {
    const workers = await startWorkers(1, concurrency);
    const n = Number(values['llm-episodes'] || 0) || Math.min(available, Math.max(10, concurrency * 6));
    await measure(`llm 300 ms/call, concurrency ${concurrency}`, { agent: 'llm', llmBaseUrl: llm.baseUrl, llmModel: 'fake-model' }, n, concurrency / episodeSeconds);
    await stopWorkers(workers);
  }
  printTable(rows);
  process.stdout.write('targets: rule ≥ 200 episodes/s; LLM-bound ≥ 80% of concurrency ÷ episode latency (3 calls × 300 ms)\n');
} finally {
  await llm.close();
  await producer.close();
  await bench.close();
}
