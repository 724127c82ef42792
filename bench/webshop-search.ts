// WebShop search benchmark: index build time, search latency and memory for the demo catalogue
// and a large generated one.
//
//   npx tsx bench/webshop-search.ts [--products 1000000] [--queries 3000] [--seed 7]
//
// Documents are streamed from the demo catalogue generator into the index; the time spent inside
// the generator is measured apart, so "index build" is the indexing work alone.

import { parseArgs } from 'node:util';
import {
  buildSearchIndex,
  DEMO_CATALOG_SIZE,
  generateDemoProducts,
  searchDocumentFromRaw,
  type SearchDocument,
  type SearchIndex,
} from '@benchfleet/webshop';

interface BenchOptions {
  products: number;
  queries: number;
  seed: number;
}

function parseOptions(argv: string[]): BenchOptions {
  const { values } = parseArgs({
    args: argv,
    options: {
      products: { type: 'string', default: '1000000' },
      queries: { type: 'string', default: '3000' },
      seed: { type: 'string', default: '7' },
    },
  });
  const positiveInteger = (name: string, raw: string): number => {
    const value = Number(raw.replaceAll('_', ''));
    if (!Number.isInteger(value) || value < 1)
      throw new Error(`--${name} must be a positive integer, got "${raw}"`);
    return value;
  };
  return {
    products: positiveInteger('products', values.products),
    queries: positiveInteger('queries', values.queries),
    seed: positiveInteger('seed', values.seed),
  };
}

const mebibytes = (bytes: number): string => `${(bytes / 2 ** 20).toFixed(0)} MiB`;

function percentile(sorted: readonly number[], fraction: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor(fraction * sorted.length))] ?? Number.NaN;
}

interface StreamedCatalog {
  documents: Iterable<SearchDocument>;
  generationMs: () => number;
  queries: string[];
}

/**
 * Streams search documents, timing the generator, and keeps a spread of queries: goal-like
 * instructions with a price limit, the product's search query with an attribute, and title words.
 */
function streamCatalog(products: number, seed: number, queryCount: number): StreamedCatalog {
  let generationMs = 0;
  const queries: string[] = [];
  const stride = Math.max(1, Math.floor(products / queryCount));
  const perProduct = Math.max(1, Math.ceil(queryCount / products));
  function* documents(): Generator<SearchDocument> {
    const records = generateDemoProducts({ products, seed });
    for (let index = 0; ; index++) {
      const started = performance.now();
      const next = records.next();
      if (next.done) return;
      const { product, attributes, humanInstructions } = next.value;
      const document = searchDocumentFromRaw(product);
      for (let k = 0; k < perProduct && index % stride === 0 && queries.length < queryCount; k++) {
        const instruction =
          humanInstructions[0]?.instruction.replace(/\.+$/, '') ?? attributes.instruction;
        const kind = queries.length % 3;
        if (kind === 0 && instruction !== undefined) {
          queries.push(
            `${instruction}, and price lower than ${(10 * (1 + (index % 30))).toFixed(2)} dollars`,
          );
        } else if (kind === 1) {
          queries.push(
            `${product.query.trim()} ${attributes.attributes[index % attributes.attributes.length] ?? ''}`,
          );
        } else {
          queries.push(
            product.name
              .split(/[\s,]+/)
              .slice(1, 4 + (index % 3))
              .join(' '),
          );
        }
      }
      generationMs += performance.now() - started;
      yield document;
    }
  }
  return { documents: documents(), generationMs: () => generationMs, queries };
}

function measureSearch(
  index: SearchIndex,
  queries: readonly string[],
): { p50: number; p99: number; mean: number; hits: number } {
  for (const query of queries.slice(0, 500)) index.search(query);
  const latencies: number[] = [];
  let hits = 0;
  for (const query of queries) {
    const started = performance.now();
    hits += index.search(query).length;
    latencies.push(performance.now() - started);
  }
  latencies.sort((a, b) => a - b);
  const mean = latencies.reduce((sum, value) => sum + value, 0) / latencies.length;
  return {
    p50: percentile(latencies, 0.5),
    p99: percentile(latencies, 0.99),
    mean,
    hits: hits / queries.length,
  };
}

function runCatalog(label: string, products: number, options: BenchOptions): void {
  const catalog = streamCatalog(products, options.seed, options.queries);
  const started = performance.now();
  const index = buildSearchIndex(catalog.documents);
  const totalMs = performance.now() - started;
  const buildMs = totalMs - catalog.generationMs();
  const rssAfterBuild = process.memoryUsage().rss;
  const search = measureSearch(index, catalog.queries);
  const { stats } = index;
  console.log(`\n${label}: ${products.toLocaleString('en-US')} products`);
  console.log(
    `  index build     ${(buildMs / 1000).toFixed(2)} s  (generator ${(catalog.generationMs() / 1000).toFixed(2)} s on top)`,
  );
  console.log(
    `  index           ${stats.termCount.toLocaleString('en-US')} terms, ${stats.postingCount.toLocaleString('en-US')} postings, ` +
      `avg length ${stats.averageLength.toFixed(1)} tokens`,
  );
  console.log(
    `  search          ${catalog.queries.length} queries: p50 ${search.p50.toFixed(3)} ms, p99 ${search.p99.toFixed(3)} ms, ` +
      `mean ${search.mean.toFixed(3)} ms, ${search.hits.toFixed(1)} hits/query`,
  );
  console.log(
    `  rss             ${mebibytes(rssAfterBuild)} after build, peak ${mebibytes(process.resourceUsage().maxRSS * 1024)}`,
  );
}

const options = parseOptions(process.argv.slice(2));
console.log(`webshop search bench (node ${process.version}, seed ${options.seed})`);
runCatalog('demo catalog', DEMO_CATALOG_SIZE, options);
if (options.products !== DEMO_CATALOG_SIZE) runCatalog('large catalog', options.products, options);
