// WebShop catalog import benchmark: streams a generated catalog in the official file formats
// (items_shuffle / items_ins_v2 / items_human_ins) into Postgres the way `scheduler webshop import`
// does, and prints throughput, peak memory and what that means for the full ~5.2 GB catalogue.
//
//   npx tsx bench/webshop-import.ts [--products 300000] [--seed 7]
//
// The files are written first (not timed); the import is timed end to end: JSON streaming,
// load_products cleaning, hidden prices, goals, and every row written in one transaction.

import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { fileCatalogRequest, importWebshopCatalog } from '@benchfleet/webshop-benchmark';
import { benchServices, printTable } from './bench-services.js';
import { writeCatalogFiles } from './catalog-files.js';

const FULL_CATALOG_BYTES = 5.2e9;
const FULL_CATALOG_PRODUCTS = 1_181_436;

const { values } = parseArgs({
  options: {
    products: { type: 'string', default: '300000' },
    seed: { type: 'string', default: '7' },
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
} finally {
  rmSync(dir, { recursive: true, force: true });
  await bench.close();
}
