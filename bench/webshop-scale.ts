// WebShop at full size: generates catalogues in the official file formats (100k, 300k and the
// full 1,181,436 products by default), imports each, and measures a worker against it.
//
//   npx tsx bench/webshop-scale.ts [--sizes 100000,300000,1181436] [--episodes 1000]
//       [--baseline ../wt-baseline] [--baseline-max 300000] [--keep] [--import-only] [--skip-memory-search]
//       [--concurrency 32]
//
// Per size: import wall time (files written first, not timed), search snapshot size, search
// p50/p99 over goal instructions (snapshot; with --baseline also today's in-memory index), and for
// worker-webshop (and with --baseline the worker of that checkout, for sizes up to --baseline-max):
// RSS when ready and after --episodes rule episodes, start → ready and start → first episode
// (cold: the snapshot is copied from Postgres; warm: it is in the machine's cache), and episodes/s
// with 1 and 2 worker processes × --concurrency. Databases are named bench_scale_<size>; --keep
// leaves them (and a later run with --keep reuses an imported catalogue instead of importing again).
// The import is this checkout's only: for an import side by side with an older checkout at any size,
// `bench/webshop-import.ts --products N --baseline DIR`.

import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { instructionToQuery } from '@benchfleet/webshop-agents';
import {
  fileCatalogRequest,
  importWebshopCatalog,
  openCatalogSearchSnapshot,
} from '@benchfleet/webshop-benchmark';
import { type Database } from '@benchfleet/db';
import { WebshopCatalogRepository } from '@benchfleet/webshop-benchmark';
import { startScript, waitFor, type StartedProcess } from '@benchfleet/testing';
import {
  buildSearchContents,
  buildSearchIndex,
  type SearchContentsSource,
  type SearchIndex,
} from '@benchfleet/webshop';
import {
  benchServices,
  enqueueWithBuild,
  percentile,
  printTable,
  type BenchServices,
} from './bench-services.js';
import { writeCatalogFiles } from './catalog-files.js';

const { values } = parseArgs({
  options: {
    sizes: { type: 'string', default: '100000,300000,1181436' },
    episodes: { type: 'string', default: '1000' },
    concurrency: { type: 'string', default: '32' },
    baseline: { type: 'string' },
    'baseline-max': { type: 'string', default: '300000' },
    queries: { type: 'string', default: '2000' },
    keep: { type: 'boolean', default: false },
    'import-only': { type: 'boolean', default: false },
    'skip-memory-search': { type: 'boolean', default: false },
    seed: { type: 'string', default: '7' },
  },
});
const sizes = values.sizes.split(',').map((size) => Number(size.replaceAll('_', '')));
const episodes = Number(values.episodes);
const concurrency = Number(values.concurrency);
const baselineMax = Number(values['baseline-max']);
const baselineRoot = values.baseline ? resolve(values.baseline) : undefined;
const workerBin = (root: string): string => join(root, 'apps/worker-webshop/bin/worker-webshop.js');
if (sizes.some((size) => !Number.isInteger(size) || size < 1))
  throw new Error(`--sizes must be positive integers, got "${values.sizes}"`);
if (baselineRoot && !existsSync(workerBin(baselineRoot)))
  throw new Error(
    `--baseline: no ${workerBin(baselineRoot)}; give the root of a checkout with npm ci done`,
  );

const CATALOG = 'bench';
const stateDir = resolve('.benchfleet/bench-scale');
mkdirSync(stateDir, { recursive: true });
const mib = (bytes: number): string => `${(bytes / 2 ** 20).toFixed(0)} MiB`;
const load = (): string =>
  loadavg()
    .map((value) => value.toFixed(1))
    .join(' ');
const say = (line: string): void =>
  void process.stderr.write(`[${new Date().toISOString().slice(11, 19)}] ${line}\n`);

type Worker = StartedProcess;

function spawnWorker(bin: string, id: string, env: NodeJS.ProcessEnv): Worker {
  return startScript(
    bin,
    ['--worker-id', id, '--concurrency', String(concurrency), '--catalog', CATALOG],
    { ...env, LOG_LEVEL: 'info' },
    false,
  );
}

function memoryOf(pid: number): { rss: number; hwm: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kib = (field: string) =>
    Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? Number.NaN) * 1024;
  return { rss: kib('VmRSS'), hwm: kib('VmHWM') };
}

async function waitReady(worker: Worker): Promise<void> {
  await waitFor(
    'a worker to be ready',
    () => {
      if (worker.child.exitCode !== null)
        throw new Error(`worker exited: ${worker.output().slice(-2000)}`);
      return worker.output().includes('"worker ready"');
    },
    30 * 60_000,
    10,
  );
}

async function stop(workers: Worker[]): Promise<void> {
  for (const worker of workers) worker.child.kill('SIGTERM');
  await Promise.all(workers.map((worker) => worker.exited));
}

/** A run of these goals, enqueued by the scheduler of the checkout at `root` (its worker reads only its own jobs). */
function enqueueRun(root: string, bench: BenchServices, goals: string): Promise<string> {
  return enqueueWithBuild(root, bench.env, { catalog: CATALOG, goals, agent: 'rule' });
}

async function runAndWait(
  root: string,
  bench: BenchServices,
  goals: string,
): Promise<{ runId: string; seconds: number }> {
  const started = performance.now();
  const runId = await enqueueRun(root, bench, goals);
  await settled(bench.db, runId);
  return { runId, seconds: (performance.now() - started) / 1000 };
}

async function settled(db: Database, runId: string): Promise<void> {
  await waitFor(
    `run ${runId} to settle`,
    async () => {
      const row = await db
        .selectFrom('tasks')
        .select((eb) => eb.fn.countAll<number>().as('open'))
        .where('run_id', '=', runId)
        .where('status', 'in', ['queued', 'running'])
        .executeTakeFirstOrThrow();
      return Number(row.open) === 0;
    },
    60 * 60_000,
    20,
  );
}

interface WorkerFigures {
  worker: string;
  'start→ready (cold)': string;
  'start→1st episode (cold)': string;
  'start→ready (warm)': string;
  'start→1st episode (warm)': string;
  'RSS ready': string;
  [key: string]: string;
}

/** Start-up, memory and throughput of one worker build against the imported catalogue. */
async function measureWorker(
  label: string,
  root: string,
  bench: BenchServices,
): Promise<WorkerFigures> {
  const bin = workerBin(root);
  const cacheDir = mkdtempSync(join(tmpdir(), 'bench-scale-cache-'));
  const env = { ...bench.env, BENCHFLEET_INDEX_CACHE: cacheDir };
  try {
    const start = async (id: string) => {
      const runId = await enqueueRun(root, bench, '0');
      const started = performance.now();
      const worker = spawnWorker(bin, id, env);
      await waitReady(worker);
      const readyMs = performance.now() - started;
      const readyMemory = memoryOf(worker.child.pid ?? 0);
      await settled(bench.db, runId);
      return { worker, readyMs, firstMs: performance.now() - started, readyMemory };
    };
    say(`${label}: cold start (load ${load()})`);
    const cold = await start(`${label}-cold`);
    say(`${label}: ${episodes} episodes on 1 worker (load ${load()})`);
    const one = await runAndWait(root, bench, `0-${episodes - 1}`);
    const after = memoryOf(cold.worker.child.pid ?? 0);
    await stop([cold.worker]);
    say(`${label}: warm start (load ${load()})`);
    const warm = await start(`${label}-warm`);
    const second = spawnWorker(bin, `${label}-second`, env);
    await waitReady(second);
    say(`${label}: ${2 * episodes} episodes on 2 workers (load ${load()})`);
    const two = await runAndWait(root, bench, `0-${2 * episodes - 1}`);
    const afterTwo = [memoryOf(warm.worker.child.pid ?? 0), memoryOf(second.child.pid ?? 0)];
    await stop([warm.worker, second]);
    return {
      worker: label,
      'start→ready (cold)': `${(cold.readyMs / 1000).toFixed(2)} s`,
      'start→1st episode (cold)': `${(cold.firstMs / 1000).toFixed(2)} s`,
      'start→ready (warm)': `${(warm.readyMs / 1000).toFixed(2)} s`,
      'start→1st episode (warm)': `${(warm.firstMs / 1000).toFixed(2)} s`,
      'RSS ready': mib(cold.readyMemory.rss),
      [`RSS after ${episodes}`]: mib(after.rss),
      'peak RSS': mib(Math.max(after.hwm, ...afterTwo.map((m) => m.hwm))),
      'episodes/s 1 worker': (episodes / one.seconds).toFixed(1),
      'episodes/s 2 workers': ((2 * episodes) / two.seconds).toFixed(1),
      'load (1/5/15 min)': load(),
    };
  } finally {
    rmSync(cacheDir, { recursive: true, force: true });
  }
}

function timeSearch(
  index: Pick<SearchIndex, 'search'>,
  queries: readonly string[],
): { p50: number; p99: number } {
  const latencies: number[] = [];
  for (const query of queries) {
    const started = performance.now();
    index.search(query, 50);
    latencies.push(performance.now() - started);
  }
  return { p50: percentile(latencies, 50), p99: percentile(latencies, 99) };
}

/** Today's engine: the whole index built in memory from the catalogue's search fields. */
async function buildInMemoryIndex(db: Database): Promise<SearchIndex> {
  const repository = new WebshopCatalogRepository(db);
  const documents: Array<{ asin: string; contents: string }> = [];
  for (let after = -1; ;) {
    const page = await repository.searchFieldsPage(CATALOG, after, 10_000);
    for (const row of page)
      documents.push({
        asin: row.asin,
        contents: buildSearchContents(row.fields as unknown as SearchContentsSource),
      });
    if (page.length < 10_000) break;
    after = page[page.length - 1]?.seq ?? after;
  }
  return buildSearchIndex(documents);
}

interface ImportFigures {
  importSeconds: number;
  snapshotBytes: number;
  products: number;
  goals: number;
}

const rows: Record<string, string | number>[] = [];
const workerRows: Record<string, string | number>[] = [];
say(
  `webshop scale bench: sizes ${sizes.join(', ')}, ${episodes} episodes, concurrency ${concurrency}, node ${process.version}, load ${load()}`,
);
for (const size of sizes) {
  const bench = await benchServices('scale', {
    database: `bench_scale_${size}`,
    keep: values.keep,
  });
  try {
    const statePath = join(stateDir, `${size}.json`);
    const repository = new WebshopCatalogRepository(bench.db);
    let figures: ImportFigures;
    const existing = await repository.get(CATALOG);
    if (
      existing &&
      existsSync(statePath) &&
      (await repository.searchSnapshot(CATALOG))?.version === existing.version
    ) {
      figures = JSON.parse(readFileSync(statePath, 'utf8')) as ImportFigures;
      say(
        `${size}: reusing the catalogue imported earlier (import ${figures.importSeconds.toFixed(0)} s)`,
      );
    } else {
      const dir = mkdtempSync(join(tmpdir(), 'bench-scale-files-'));
      try {
        say(`${size}: writing the catalogue files (load ${load()})`);
        const paths = await writeCatalogFiles(dir, size, Number(values.seed));
        say(`${size}: importing (load ${load()})`);
        const started = performance.now();
        const report = await importWebshopCatalog(
          bench.db,
          fileCatalogRequest({ ...paths, seed: 0, catalogId: CATALOG }),
        );
        figures = {
          importSeconds: (performance.now() - started) / 1000,
          snapshotBytes: report.searchSnapshotBytes,
          products: report.products,
          goals: report.goals,
        };
        writeFileSync(statePath, JSON.stringify(figures));
        say(
          `${size}: imported ${report.products} products, ${report.goals} goals in ${figures.importSeconds.toFixed(0)} s`,
        );
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    }

    if (values['import-only']) continue;
    const goals = await repository.goals(CATALOG);
    if (goals.length < 2 * episodes)
      throw new Error(
        `catalogue of ${size} has ${goals.length} goals; --episodes ${episodes} needs ${2 * episodes}`,
      );
    const queries = goals
      .slice(0, Number(values.queries))
      .map((goal) => instructionToQuery(goal.instruction).toLowerCase());
    const cacheDir = mkdtempSync(join(tmpdir(), 'bench-scale-search-'));
    const { snapshot } = await openCatalogSearchSnapshot(bench.db, CATALOG, cacheDir);
    const snapshotSearch = timeSearch(snapshot, queries);
    snapshot.close();
    rmSync(cacheDir, { recursive: true, force: true });
    let memorySearch: { p50: number; p99: number } | undefined;
    if (baselineRoot && size <= baselineMax && !values['skip-memory-search'])
      memorySearch = timeSearch(await buildInMemoryIndex(bench.db), queries);

    rows.push({
      products: figures.products.toLocaleString('en'),
      goals: figures.goals.toLocaleString('en'),
      import: `${figures.importSeconds.toFixed(0)} s`,
      snapshot: mib(figures.snapshotBytes),
      'search p50/p99 (snapshot)': `${snapshotSearch.p50.toFixed(2)} / ${snapshotSearch.p99.toFixed(2)} ms`,
      'search p50/p99 (in memory, today)': memorySearch
        ? `${memorySearch.p50.toFixed(2)} / ${memorySearch.p99.toFixed(2)} ms`
        : '-',
    });
    const measured = [await measureWorker('snapshot', resolve('.'), bench)];
    if (baselineRoot && size <= baselineMax)
      measured.push(await measureWorker('baseline', baselineRoot, bench));
    for (const figures of measured)
      workerRows.push({ products: size.toLocaleString('en'), ...figures });
    printTable(rows);
    printTable(workerRows);
  } finally {
    await bench.close();
  }
}
process.stdout.write('\nCatalogues\n');
printTable(rows);
process.stdout.write('\nWorkers (rule agent)\n');
printTable(workerRows);
