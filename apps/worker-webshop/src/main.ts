import { createCliProgram, runCliProgram } from '@benchfleet/core';
import { webshopCatalogRepository } from '@benchfleet/db';
import { serve, startWorkerProcess } from '@benchfleet/queue';
import { StoreCache, webshopBenchmark } from '@benchfleet/webshop-benchmark';
import { loadWebshopWorkerConfig, type WebshopWorkerFlags } from './config.js';
import { createWebshopEpisodeHandler } from './handlers/webshop-episode.js';

const program = createCliProgram('worker-webshop', 'runs WebShop episodes from the queue: stateless, many at once, every step to Postgres')
  .option('--concurrency <n>', 'episodes at once (default 32, or BENCHFLEET_CONCURRENCY)')
  .option('--catalog <id>', 'catalog to load at start (default: the latest imported; others load on first use)')
  .option('--worker-id <id>', 'identity of this worker (default webshop-<hostname>-<pid>)')
  .option('--grace-s <n>', 'seconds active episodes may finish after SIGTERM before they are handed back (default 60)')
  .option('--metrics-port <port>', 'serve /metrics and /healthz on this port (or BENCHFLEET_METRICS_PORT)')
  .option('--price-table <file|json>', 'USD per 1M tokens per model, {"model":{"inputUsdPerMillion":..,"outputUsdPerMillion":..}} (or LLM_PRICE_TABLE)')
  .action(async (flags: WebshopWorkerFlags) => {
    const config = loadWebshopWorkerConfig(flags);
    const running = await startWorkerProcess(
      {
        app: 'worker-webshop',
        queue: webshopBenchmark.job.queue,
        databaseUrl: config.databaseUrl,
        redisUrl: config.redisUrl,
        prefix: config.prefix,
        concurrency: config.concurrency,
        workerId: config.workerId,
        graceMs: config.graceMs,
        logLevel: config.logLevel,
        ...(config.metricsPort !== undefined ? { metricsPort: config.metricsPort } : {}),
        ...(config.lockDurationMs !== undefined ? { lockDurationMs: config.lockDurationMs, stalledIntervalMs: config.lockDurationMs } : {}),
      },
      async ({ db, logger, taskDeps }) => {
        const stores = new StoreCache(db, (loaded) =>
          logger.info({ catalog: loaded.catalogId, products: loaded.products, goals: loaded.goals, loadMs: loaded.loadMs }, 'catalog loaded and indexed'),
        );
        // Load the catalog and build its index before taking the first job.
        const preload = config.catalog ?? (await webshopCatalogRepository(db).latestId());
        if (preload) await stores.get(preload);
        else logger.warn('no WebShop catalog imported yet: it will be loaded when the first job names one');
        const handler = createWebshopEpisodeHandler({
          taskDeps,
          stores,
          agentRuntime: {
            ...(config.llmApiKey ? { apiKey: config.llmApiKey } : {}),
            ...(config.priceTable ? { priceTable: config.priceTable } : {}),
            logger,
          },
        });
        return [serve(webshopBenchmark.job, handler)];
      },
    );
    await running.finished;
  });

await runCliProgram(program, process.argv);
