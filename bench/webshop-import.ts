// WebShop catalog import benchmark: streams a generated catalog in the official file formats
// (items_shuffle / items_ins_v2 / items_human_ins) into Postgres the way `scheduler webshop import`
// does, and prints throughput, peak memory and what that means for the full ~5.2 GB catalogue.
//
//   npx tsx bench/webshop-import.ts [--products 300000] [--seed 7]
//   npx tsx bench/webshop-import.ts --products 200000 --baseline ../wt-base [--rounds 2]
//
// The files are written first (not timed); the import is timed end to end: JSON streaming,
// load_products cleaning, hidden prices, goals, and every row written in one transaction.
// With --baseline DIR (the root of another checkout, built), the same files are imported by each
// checkout's own `scheduler migrate` + `scheduler webshop import` into a database of its own,
// alternating which goes first, round after round: wall time and the importing process's CPU side
// by side (on a shared machine compare the CPU and the ratios, not the wall times).

import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { fileCatalogRequest, importWebshopCatalog } from '@benchfleet/webshop-benchmark';
import { benchServices, printTable, type BenchServices } from './bench-services.js';
import { writeCatalogFiles, type CatalogFiles } from './catalog-files.js';
import { importWithScheduler, type SchedulerImport } from './scheduler-import.js';

const FULL_CATALOG_BYTES = 5.2e9;
const FULL_CATALOG_PRODUCTS = 1_181_436;

const { values } = parseArgs({
  options: {
    products: { type: 'string', default: '300000' },
    seed: { type: 'string', default: '7' },
    baseline: { type: 'string' },
    rounds: { type: 'string', default: '1' },
  },
});
const products = Number(values.products.replaceAll('_', ''));
const seed = Number(values.seed);
if (!Number.isInteger(products) || products < 1)
  throw new Error(`--products must be a positive integer, got "${values.products}"`);

const dir = mkdtempSync(join(tmpdir(), 'bench-import-'));
const bench = await benchServices('import');
try {
  process.stderr.write(`writing ${products.toLocaleString('en')} generated products to ${dir} …\n`);
  const paths = await writeCatalogFiles(dir, products, seed);
  if (values.baseline !== undefined)
    await compareWithBaseline(resolve(values.baseline), bench.services.databaseUrl, paths);
  else await importInProcess(bench, paths);
} finally {
  rmSync(dir, { recursive: true, force: true });
  await bench.close();
}

/** This checkout's import called in this process, with its progress, peak RSS and extrapolation. */
async function importInProcess(bench: BenchServices, paths: CatalogFiles): Promise<void> {
  const itemsBytes = statSync(paths.items).size;
  let peakRss = process.memoryUsage().rss;
  const sampler = setInterval(() => (peakRss = Math.max(peakRss, process.memoryUsage().rss)), 100);
  const started = performance.now();
  const report = await importWebshopCatalog(
    bench.db,
    fileCatalogRequest({ ...paths, seed: 0, catalogId: 'bench' }),
    (progress) => {
      if (progress.products % 50_000 === 0)
        process.stderr.write(
          `  ${progress.products.toLocaleString('en')} products, ${progress.done}/${progress.total} ${progress.unit}\n`,
        );
    },
  );
  const seconds = (performance.now() - started) / 1000;
  clearInterval(sampler);

  const bytesPerSecond = itemsBytes / seconds;
  const rows: Array<[string, string]> = [
    [
      'items file',
      `${(itemsBytes / 1e6).toFixed(0)} MB, ${report.products.toLocaleString('en')} products (${(itemsBytes / report.products).toFixed(0)} bytes each)`,
    ],
    ['goals', `${report.goals.toLocaleString('en')} human goals`],
    ['import wall time', `${seconds.toFixed(1)} s`],
    [
      'throughput',
      `${(bytesPerSecond / 1e6).toFixed(1)} MB/s, ${Math.round(report.products / seconds).toLocaleString('en')} products/s`,
    ],
    ['peak RSS', `${(peakRss / 2 ** 20).toFixed(0)} MiB`],
    [
      'full catalogue (5.2 GB, 1.18M products), extrapolated',
      `${(FULL_CATALOG_BYTES / bytesPerSecond / 60).toFixed(1)} min by bytes, ${(FULL_CATALOG_PRODUCTS / (report.products / seconds) / 60).toFixed(1)} min by products`,
    ],
  ];
  printTable(rows.map(([figure, value]) => ({ figure, value })));
}

/** This checkout's scheduler and the baseline's import the same files, alternating, `--rounds` times. */
async function compareWithBaseline(
  baseline: string,
  serverUrl: string,
  paths: CatalogFiles,
): Promise<void> {
  const load = (): string =>
    loadavg()
      .map((value) => value.toFixed(1))
      .join(' ');
  const checkouts = [
    { label: 'this checkout', root: resolve('.') },
    { label: `baseline ${baseline}`, root: baseline },
  ];
  const results = new Map<string, SchedulerImport[]>(checkouts.map(({ label }) => [label, []]));
  const rounds = Number(values.rounds);
  for (let round = 0; round < rounds; round += 1) {
    for (const { label, root } of round % 2 === 0 ? checkouts : [...checkouts].reverse()) {
      process.stderr.write(`round ${round + 1}: ${label} importing (load ${load()}) …\n`);
      const measured = await importWithScheduler(
        root,
        serverUrl,
        `bench_import_cli_${round}`,
        paths,
      );
      process.stderr.write(
        `  ${measured.seconds.toFixed(1)} s, CPU ${measured.cpuSeconds.toFixed(1)} s (load ${load()})\n`,
      );
      results.get(label)?.push(measured);
    }
  }
  const [ours, theirs] = checkouts.map(({ label }) => results.get(label) ?? []);
  const sum = (list: SchedulerImport[], key: 'seconds' | 'cpuSeconds') =>
    list.reduce((total, item) => total + item[key], 0);
  const rows = checkouts.map(({ label }) => {
    const list = results.get(label) ?? [];
    return {
      checkout: label,
      products: (list[0]?.products ?? 0).toLocaleString('en'),
      goals: (list[0]?.goals ?? 0).toLocaleString('en'),
      'wall s (per round)': list.map((item) => item.seconds.toFixed(1)).join(', '),
      'importer CPU s (per round)': list.map((item) => item.cpuSeconds.toFixed(1)).join(', '),
    };
  });
  printTable(rows);
  process.stdout.write(
    `this ÷ baseline: wall ${(sum(ours!, 'seconds') / sum(theirs!, 'seconds')).toFixed(2)}, ` +
      `importer CPU ${(sum(ours!, 'cpuSeconds') / sum(theirs!, 'cpuSeconds')).toFixed(2)}; ` +
      `load average ${load()}\n`,
  );
}
