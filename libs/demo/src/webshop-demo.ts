import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type { Database } from '@benchfleet/db';
import type { EnqueueInput } from '@benchfleet/runs';
import {
  demoCatalogRequest,
  importWebshopCatalog,
  WebshopCatalogRepository,
} from '@benchfleet/webshop-benchmark';

/** What `scheduler demo` runs: the benchmark's data, its workers and its run. */
export interface DemoWiring {
  /** Puts what the run needs in the database (once), saying what it did. */
  prepare(db: Database, say: (line: string) => void): Promise<void>;
  /** The worker app each worker process runs: its bin and its arguments. */
  readonly workerBin: string;
  workerArgs(index: number, concurrency: number): string[];
  /** How the workers are described in the demo's output. */
  describeWorkers(workers: number, concurrency: number): string;
  /** The run it enqueues, of `episodes` tasks. */
  run(episodes: number): EnqueueInput;
}

// Found through the workspace links, which hold whether this runs from the sources or the bundle.
const require = createRequire(import.meta.url);

/** The demo's WebShop run: the generated demo catalog, `worker-webshop` processes, the rule agent. */
export const webshopDemo: DemoWiring = {
  async prepare(db, say) {
    if (await new WebshopCatalogRepository(db).get('demo')) {
      say('catalog: demo catalog already imported');
      return;
    }
    const report = await importWebshopCatalog(db, demoCatalogRequest({ seed: 0 }));
    say(
      `catalog: generated and imported the demo catalog (${report.products} products, ${report.goals} goals)`,
    );
  },
  workerBin: join(
    dirname(require.resolve('@benchfleet/worker-webshop/package.json')),
    'bin',
    'worker-webshop.js',
  ),
  workerArgs: (index, concurrency) => [
    '--concurrency',
    String(concurrency),
    '--catalog',
    'demo',
    '--worker-id',
    `demo-webshop-${index + 1}`,
  ],
  describeWorkers: (workers, concurrency) =>
    `${workers} worker-webshop process(es) × concurrency ${concurrency}`,
  run: (episodes) => ({
    benchmark: 'webshop',
    domains: [],
    maxTasks: episodes,
    runName: 'demo-webshop-rule',
    flags: { catalog: 'demo', split: 'test', agent: 'rule' },
  }),
};
