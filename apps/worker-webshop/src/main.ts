import { createCliProgram, runCliProgram } from '@benchfleet/core';
import { webshopCatalogRepository } from '@benchfleet/db';
import { workerProcessSettings } from '@benchfleet/queue';
import { startBenchmarkWorker } from '@benchfleet/runs';
import { StoreCache, webshopBenchmark } from '@benchfleet/webshop-benchmark';
import { loadWebshopWorkerConfig, type WebshopWorkerFlags } from './config.js';
import { createWebshopEpisodeHandler } from './handlers/webshop-episode.js';

const program = createCliProgram('worker-webshop', 'runs WebShop episodes from the queue: stateless, many at once, every step to Postgres')
  .option('--concurrency <n>', 'episodes at once (default 32, or BENCHFLEET_CONCURRENCY)')
  .option('--catalog <id>', 'catalog to load at start (default: the latest imported; others load on first use)')
  .option('--worker-id <id>', 'identity of this worker (default webshop-<hostname>-<pid>)')
  .option('--grace-s <n>', 'seconds active episodes may finish after SIGTERM before they are handed back (default 60)')
  .option('--metrics-port <port>', 'serve /metrics and /healthz on this port, 0 for any free one (or BENCHFLEET_METRICS_PORT)')
  .option('--metrics-host <host>', 'address /metrics and /healthz listen on (default 127.0.0.1; 0.0.0.0 for probes from outside; or BENCHFLEET_METRICS_HOST)')
  .option('--price-table <file|json>', 'USD per 1M tokens per model, {"model":{"inputUsdPerMillion":..,"outputUsdPerMillion":..}} (or LLM_PRICE_TABLE)')
  .action(async (flags: WebshopWorkerFlags) => {
    const config = loadWebshopWorkerConfig(flags);
    const running = await startBenchmarkWorker(
      webshopBenchmark,
      {
        app: 'worker-webshop',
        ...workerProcessSettings(config),
        concurrency: config.concurrency,
      },
      async ({ db, logger, taskDeps }) => {
        const stores = new StoreCache(db, (loaded) =>
          logger.info({ catalog: loaded.catalogId, products: loaded.products, goals: loaded.goals, loadMs: loaded.loadMs }, 'catalog loaded and indexed'),
        );
        // Load the catalog and build its index before taking the first job.
        const preload = config.catalog ?? (await webshopCatalogRepository(db).latestId());
        if (preload) await stores.get(preload);
        else logger.warn('no WebShop catalog imported yet: it will be loaded when the first job names one');
        return createWebshopEpisodeHandler({
          taskDeps,
          stores,
          agentRuntime: {
            ...(config.llmApiKey ? { apiKey: config.llmApiKey } : {}),
            ...(config.priceTable ? { priceTable: config.priceTable } : {}),
            logger,
          },
        });
      },
    );
    await running.finished;
  });

await runCliProgram(program, process.argv);
