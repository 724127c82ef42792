import { Command } from 'commander';
import { failAndExit } from '@benchfleet/core';
import { webshopCatalogRepository } from '@benchfleet/db';
import { startWorkerProcess } from '@benchfleet/queue';
import { loadWebshopWorkerConfig, type WebshopWorkerFlags } from './config.js';
import { openStoreFromSnapshot, StoreCache } from '@benchfleet/catalog-store';
import { createWebshopEpisodeHandler } from './handlers/webshop-episode.js';

const program = new Command('worker-webshop')
  .description('runs WebShop episodes from the queue: stateless, many at once, every step to Postgres')
  .option('--concurrency <n>', 'episodes at once (default 32, or BENCHFLEET_CONCURRENCY)')
  .option('--catalog <id>', 'catalog to load at start (default: the latest imported; others load on first use)')
  .option('--worker-id <id>', 'identity of this worker (default webshop-<hostname>-<pid>)')
  .option('--grace-s <n>', 'seconds active episodes may finish after SIGTERM before they are handed back (default 60)')
  .option('--metrics-port <port>', 'serve /metrics and /healthz on this port (or BENCHFLEET_METRICS_PORT)')
  .option('--index-cache <dir>', 'where this machine keeps copies of catalog search snapshots (default .benchfleet/index-cache, or BENCHFLEET_INDEX_CACHE)')
  .option('--product-cache <n>', 'products kept in memory, least recently used dropped first (default 5000, or BENCHFLEET_PRODUCT_CACHE)')
  .option('--postings-cache-mib <n>', 'MiB of search posting lists kept in memory; the rest is read from the snapshot file (default 256, or BENCHFLEET_POSTINGS_CACHE_MIB)')
  .option('--price-table <file|json>', 'USD per 1M tokens per model, {"model":{"inputUsdPerMillion":..,"outputUsdPerMillion":..}} (or LLM_PRICE_TABLE)')
  .showHelpAfterError()
  .action(async (flags: WebshopWorkerFlags) => {
    const config = loadWebshopWorkerConfig(flags);
    const running = await startWorkerProcess(
      {
        app: 'worker-webshop',
        queue: 'webshop',
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
        const stores = new StoreCache(
          (catalogId) =>
            openStoreFromSnapshot(db, catalogId, {
              cacheDir: config.indexCacheDir,
              productCacheEntries: config.productCacheEntries,
              postingsCacheBytes: config.postingsCacheMib * 2 ** 20,
            }),
          (loaded) =>
            logger.info(
              { catalog: loaded.catalogId, products: loaded.products, goals: loaded.goals, loadMs: loaded.loadMs, snapshot: loaded.snapshot },
              'catalog opened',
            ),
        );
        // Open the catalog's search snapshot before taking the first job.
        const preload = config.catalog ?? (await webshopCatalogRepository(db).latestId());
        if (preload) await stores.get(preload);
        else logger.warn('no WebShop catalog imported yet: it will be loaded when the first job names one');
        return {
          'webshop-episode': createWebshopEpisodeHandler({
            db,
            taskDeps,
            stores,
            agentRuntime: {
              ...(config.llmApiKey ? { apiKey: config.llmApiKey } : {}),
              ...(config.priceTable ? { priceTable: config.priceTable } : {}),
              logger,
            },
          }),
        };
      },
    );
    await running.finished;
  });

try {
  await program.parseAsync(process.argv);
} catch (error) {
  failAndExit('worker-webshop', error, process.env.BENCHFLEET_DEBUG === '1');
}
