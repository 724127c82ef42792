// End-to-end WebShop throughput (enqueue → worker processes → Postgres), and how fast the CLIs start.
// Run: npx tsx bench/webshop-fleet.ts [--episodes 3000] [--rounds 2] [--baseline ../wt-baseline] [--cpu-prof DIR]
// Prints episodes/s for the rule agent with 1 and 2 worker processes (with --baseline: the same
// for that checkout's worker, measured in turns with this one on the same catalog), the LLM agent
// against the fake OpenAI-compatible server at 300 ms per call with concurrency 1, 8 and 64, and
// cold starts: `scheduler --help` and start → `worker ready` of worker-webshop. Statements per episode
// are the transactions the bench database committed during a run, divided by its episodes.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { sql } from 'kysely';
import { startFakeLlm, startScript, waitFor, type StartedProcess } from '@benchfleet/testing';
import { demoCatalogRequest, importWebshopCatalog } from '@benchfleet/webshop-benchmark';
import { benchServices, enqueueWithBuild, percentile, printTable } from './bench-services.js';

const { values } = parseArgs({
  options: {
    episodes: { type: 'string', default: '3000' },
    rounds: { type: 'string', default: '2' },
    'llm-episodes': { type: 'string', default: '' },
    baseline: { type: 'string' },
    'skip-llm': { type: 'boolean', default: false },
    // Each worker process writes a V8 CPU profile into this directory when it stops.
    'cpu-prof': { type: 'string' },
  },
});
const ruleEpisodes = Number(values.episodes);
const rounds = Number(values.rounds);
const LLM_LATENCY_MS = 300;
const baselineRoot = values.baseline ? resolve(values.baseline) : undefined;
if (baselineRoot && !existsSync(join(baselineRoot, 'apps/worker-webshop/bin/worker-webshop.js')))
  throw new Error(`--baseline ${baselineRoot}: no worker-webshop bin there`);
const builds = [
  { name: 'this', root: resolve('.') },
  ...(baselineRoot ? [{ name: 'baseline', root: baselineRoot }] : []),
];
const cpuProfileArgs = values['cpu-prof']
  ? ['--cpu-prof', `--cpu-prof-dir=${resolve(values['cpu-prof'])}`]
  : [];
const load = (): string =>
  loadavg()
    .map((value) => value.toFixed(1))
    .join(' ');

const bench = await benchServices('fleet');
const llm = await startFakeLlm({ latencyMs: LLM_LATENCY_MS });
const indexCache = mkdtempSync(join(tmpdir(), 'bench-fleet-cache-'));
const rows: Record<string, string | number>[] = [];

type Worker = StartedProcess;

function spawnWorker(root: string, id: string, concurrency: number): Worker {
  const bin = join(root, 'apps/worker-webshop/bin/worker-webshop.js');
  return startScript(
    bin,
    ['--worker-id', id, '--concurrency', String(concurrency), '--catalog', 'bench'],
    { ...bench.env, LOG_LEVEL: 'info', BENCHFLEET_INDEX_CACHE: indexCache },
    false,
    cpuProfileArgs,
  );
}

async function startWorkers(
  root: string,
  count: number,
  concurrency: number,
): Promise<{ workers: Worker[]; readyMs: number }> {
  const started = performance.now();
  const workers = Array.from({ length: count }, (_, i) =>
    spawnWorker(root, `bench-${i}`, concurrency),
  );
  await waitFor(
    'workers to be ready',
    () => {
      const dead = workers.find((worker) => worker.child.exitCode !== null);
      if (dead) throw new Error(`a worker exited: ${dead.output().slice(-2000)}`);
      return workers.every((worker) => worker.output().includes('"worker ready"'));
    },
    120_000,
    5,
  );
  return { workers, readyMs: performance.now() - started };
}

async function stopWorkers(workers: Worker[]): Promise<void> {
  for (const worker of workers) worker.child.kill('SIGTERM');
  await Promise.all(workers.map((worker) => worker.exited));
}

/** CPU time (user + system) a process has used, in ms; 0 once it is gone. */
function cpuMs(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) * 10;
  } catch {
    return 0;
  }
}

/** CPU used so far by each Postgres backend serving the bench database. */
async function postgresCpu(): Promise<Map<number, number>> {
  const backends = await sql<{
    pid: number;
  }>`select pid from pg_stat_activity where datname = current_database()`.execute(bench.db);
  return new Map(backends.rows.map((row) => [row.pid, cpuMs(row.pid)]));
}

interface Measured {
  rate: number;
  steps: number;
  seconds: number;
  /** CPU per episode of the worker processes, and of the Postgres backends serving the database. */
  workerCpuMs: number;
  postgresCpuMs: number;
  /** Transactions committed in the bench database per episode: its statements, as every one commits on its own. */
  commits: number;
}

/** Transactions committed so far in the bench database (the statistics lag up to a second). */
async function commitsSoFar(): Promise<number> {
  const row = await sql<{
    commits: string;
  }>`select xact_commit as commits from pg_stat_database where datname = current_database()`.execute(
    bench.db,
  );
  return Number(row.rows[0]?.commits ?? 0);
}

async function measure(
  root: string,
  flags: Record<string, string>,
  episodes: number,
  workers: Worker[] = [],
): Promise<Measured> {
  const workerCpuBefore = workers.map((worker) => cpuMs(worker.child.pid ?? 0));
  const postgresBefore = await postgresCpu();
  const commitsBefore = await commitsSoFar();
  const runId = await enqueueWithBuild(root, bench.env, {
    catalog: 'bench',
    goals: `0-${episodes - 1}`,
    ...flags,
  });
  const { steps } = await waitFor(
    `run ${runId}`,
    async () => {
      const row = await bench.db
        .selectFrom('tasks')
        .select((eb) => [eb.fn.countAll<number>().as('open')])
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
  // From the first episode's start to the last one's end, as the workers recorded them: a CLI's
  // start-up is not counted against its workers.
  const span = await sql<{ seconds: number }>`
    select extract(epoch from max(finished_at) - min(started_at))::float8 as seconds from tasks where run_id = ${runId}
  `.execute(bench.db);
  const seconds = Number(span.rows[0]?.seconds);
  const workerCpu = workers.reduce(
    (sum, worker, i) => sum + cpuMs(worker.child.pid ?? 0) - (workerCpuBefore[i] ?? 0),
    0,
  );
  let postgresCpuTotal = 0;
  for (const [pid, used] of await postgresCpu())
    postgresCpuTotal += used - (postgresBefore.get(pid) ?? 0);
  await new Promise((resolve) => setTimeout(resolve, 1_500));
  const commits = (await commitsSoFar()) - commitsBefore;
  return {
    rate: episodes / seconds,
    steps,
    seconds,
    workerCpuMs: workerCpu / episodes,
    postgresCpuMs: postgresCpuTotal / episodes,
    commits: commits / episodes,
  };
}

/** Median wall time of `node <bin> --help`, each a fresh process. */
function helpColdStart(root: string, times: number): number {
  const bin = join(root, 'apps/scheduler/bin/scheduler.js');
  const samples: number[] = [];
  for (let i = 0; i < times; i++) {
    const started = performance.now();
    const result = spawnSync(process.execPath, [bin, '--help'], {
      env: bench.env,
      stdio: 'ignore',
    });
    if (result.status !== 0) throw new Error(`${bin} --help exited with ${result.status}`);
    samples.push(performance.now() - started);
  }
  return percentile(samples, 50);
}

try {
  // Enough goals for every run: the demo generator at 12k products gives several thousand.
  const report = await importWebshopCatalog(
    bench.db,
    demoCatalogRequest({ seed: 0, products: 12_000, catalogId: 'bench' }),
  );
  const available = report.goals;
  const episodes = Math.min(ruleEpisodes, available);
  process.stderr.write(
    `catalog: ${report.products} products, ${report.goals} goals; load ${load()}\n`,
  );

  const starts: Record<string, string | number>[] = [];
  const nodeSamples = Array.from({ length: 7 }, () => {
    const started = performance.now();
    spawnSync(process.execPath, ['-e', '0']);
    return performance.now() - started;
  });
  const node = percentile(nodeSamples, 50);
  for (const build of builds) {
    const help = helpColdStart(build.root, 7);
    const readies: number[] = [];
    for (let i = 0; i < 3; i++) {
      const { workers, readyMs } = await startWorkers(build.root, 1, 32);
      readies.push(readyMs);
      await stopWorkers(workers);
    }
    starts.push({
      build: build.name,
      'scheduler --help (median of 7)': `${help.toFixed(0)} ms`,
      'worker-webshop start → ready (median of 3)': `${percentile(readies, 50).toFixed(0)} ms`,
      'node -e 0': `${node.toFixed(0)} ms`,
      load: load(),
    });
  }

  const rates = new Map<string, number[]>();
  const cpu = new Map<string, Array<[number, number]>>();
  const commitsPerEpisode = new Map<string, number[]>();
  for (let round = 0; round < rounds; round++) {
    for (const processes of [1, 2]) {
      for (const build of round % 2 === 0 ? builds : [...builds].reverse()) {
        const { workers } = await startWorkers(build.root, processes, 32);
        const result = await measure(build.root, { agent: 'rule' }, episodes, workers);
        await stopWorkers(workers);
        const key = `${build.name}|${processes}`;
        rates.set(key, [...(rates.get(key) ?? []), result.rate]);
        cpu.set(key, [...(cpu.get(key) ?? []), [result.workerCpuMs, result.postgresCpuMs]]);
        commitsPerEpisode.set(key, [...(commitsPerEpisode.get(key) ?? []), result.commits]);
        process.stderr.write(
          `round ${round + 1}: ${build.name}, ${processes} process(es): ${result.rate.toFixed(1)} episodes/s, CPU/episode worker ${result.workerCpuMs.toFixed(2)} ms, Postgres ${result.postgresCpuMs.toFixed(2)} ms, ${result.commits.toFixed(2)} statements (${result.steps} steps; load ${load()})\n`,
        );
      }
    }
  }
  const mean = (list: number[] = []) =>
    list.reduce((sum, value) => sum + value, 0) / Math.max(1, list.length);
  for (const processes of [1, 2]) {
    for (const build of builds) {
      const list = rates.get(`${build.name}|${processes}`) ?? [];
      const cpuList = cpu.get(`${build.name}|${processes}`) ?? [];
      const one = mean(rates.get(`${build.name}|1`));
      const baseline = mean(rates.get(`baseline|${processes}`));
      rows.push({
        setup: `rule, ${build.name}, ${processes} process(es) × 32`,
        episodes,
        'episodes/s': `${mean(list).toFixed(1)} (${list.map((rate) => rate.toFixed(0)).join(', ')})`,
        '× 1 process': (mean(list) / one).toFixed(2),
        '× baseline': baselineRoot ? (mean(list) / baseline).toFixed(2) : '-',
        'CPU ms/episode: worker, Postgres': `${mean(cpuList.map(([worker]) => worker)).toFixed(2)}, ${mean(cpuList.map(([, postgres]) => postgres)).toFixed(2)}`,
        'statements/episode': mean(commitsPerEpisode.get(`${build.name}|${processes}`)).toFixed(2),
      });
    }
  }

  if (!values['skip-llm']) {
    // One LLM episode of the rule policy is 3 calls: search, click, buy.
    const episodeSeconds = (3 * LLM_LATENCY_MS) / 1000;
    for (const concurrency of [1, 8, 64]) {
      const { workers } = await startWorkers(resolve('.'), 1, concurrency);
      const n =
        Number(values['llm-episodes'] || 0) || Math.min(available, Math.max(10, concurrency * 6));
      const ideal = concurrency / episodeSeconds;
      const result = await measure(
        resolve('.'),
        { agent: 'llm', llmBaseUrl: llm.baseUrl, llmModel: 'fake-model' },
        n,
      );
      await stopWorkers(workers);
      rows.push({
        setup: `llm 300 ms/call, concurrency ${concurrency}`,
        episodes: n,
        'episodes/s': result.rate.toFixed(1),
        '× 1 process': '-',
        '× baseline': `${((result.rate / ideal) * 100).toFixed(0)}% of ideal ${ideal.toFixed(1)}/s`,
        'CPU ms/episode: worker, Postgres': '-',
        'statements/episode': '-',
      });
    }
  }
  printTable(rows);
  process.stdout.write('\n');
  printTable(starts);
  process.stdout.write(`load average at the end: ${load()} (2 cores)\n`);
  process.stdout.write(
    'targets: rule ≥ 2× baseline with one process, two processes ≥ 1.7× one; scheduler --help < 300 ms; worker ready < 1 s plus catalogue open\n',
  );
} finally {
  rmSync(indexCache, { recursive: true, force: true });
  await llm.close();
  await bench.close();
}
