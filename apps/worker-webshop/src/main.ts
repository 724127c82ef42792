import { createCliProgram, runCliProgram } from '@benchfleet/core';
import { LlmGovernor, LlmLimitsTable } from '@benchfleet/llm-governor';
import { webshopCatalogRepository } from '@benchfleet/db';
import { startBenchmarkWorker, workerProcessSettings } from '@benchfleet/runs';
import { openStoreFromSnapshot, StoreCache, webshopBenchmark } from '@benchfleet/webshop-benchmark';
import { loadWebshopWorkerConfig, type WebshopWorkerFlags } from './config.js';
import { createWebshopEpisodeHandler } from './handlers/webshop-episode.js';

const program = createCliProgram(
  'worker-webshop',
  'runs WebShop episodes from the queue: stateless, many at once, every step to Postgres',
)
  .option('--concurrency <n>', 'episodes at once (default 32, or BENCHFLEET_CONCURRENCY)')
  .option(
    '--catalog <id>',
    'catalog to load at start (default: the latest imported; others load on first use)',
  )
  .option('--worker-id <id>', 'identity of this worker (default webshop-<hostname>-<pid>)')
  .option(
    '--grace-s <n>',
    'seconds active episodes may finish after SIGTERM before they are handed back (default 60)',
  )
  .option(
    '--metrics-port <port>',
    'serve /metrics and /healthz on this port, 0 for any free one (or BENCHFLEET_METRICS_PORT)',
  )
  .option(
    '--metrics-host <host>',
    'address /metrics and /healthz listen on (default 127.0.0.1; 0.0.0.0 for probes from outside; or BENCHFLEET_METRICS_HOST)',
  )
  .option(
    '--index-cache <dir>',
    'where this machine keeps copies of catalog search snapshots (default .benchfleet/index-cache, or BENCHFLEET_INDEX_CACHE)',
  )
  .option(
    '--product-cache <n>',
    'products kept in memory, least recently used dropped first (default 5000, or BENCHFLEET_PRODUCT_CACHE)',
  )
  .option(
    '--postings-cache-mib <n>',
    'MiB of search posting lists kept in memory; the rest is read from the snapshot file (default 256, or BENCHFLEET_POSTINGS_CACHE_MIB)',
  )
  .option(
    '--price-table <file|json>',
    'USD per 1M tokens per model, {"model":{"inputUsdPerMillion":..,"outputUsdPerMillion":..}} (or LLM_PRICE_TABLE)',
  )
  .option(
    '--llm-limits <file>',
    'YAML or JSON limits per provider and model: {limits: [{provider, model, requestsPerMinute, tokensPerMinute, maxConcurrency, inputUsdPerMillion, outputUsdPerMillion}]} (or LLM_LIMITS)',
  )
  .option(
    '--llm-rpm <n>',
    'requests per minute per provider, key and model, for the whole fleet; wins over --llm-limits (or LLM_RPM)',
  )
  .option(
    '--llm-tpm <n>',
    'tokens per minute per provider, key and model, for the whole fleet; wins over --llm-limits (or LLM_TPM)',
  )
  .option(
    '--llm-max-concurrency <n>',
    'LLM calls in flight across the fleet per provider, key and model, at most (default 256, or LLM_MAX_CONCURRENCY)',
  )
  .action(async (flags: WebshopWorkerFlags) => {
    const config = loadWebshopWorkerConfig(flags);
    let governor: LlmGovernor | undefined;
    const running = await startBenchmarkWorker(
      webshopBenchmark,
      {
        app: 'worker-webshop',
        ...workerProcessSettings(config),
        concurrency: config.concurrency,
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
              {
                catalog: loaded.catalogId,
                products: loaded.products,
                goals: loaded.goals,
                loadMs: loaded.loadMs,
                snapshot: loaded.snapshot,
              },
              'catalog opened',
            ),
        );
        // Open the catalog's search snapshot before taking the first job.
        const preload = config.catalog ?? (await webshopCatalogRepository(db).latestId());
        if (preload) await stores.get(preload);
        else
          logger.warn(
            'no WebShop catalog imported yet: it will be loaded when the first job names one',
          );
        // One brake for every LLM call of the fleet: limits, Retry-After and spend shared in Redis.
        governor = new LlmGovernor({
          redisUrl: config.redisUrl,
          prefix: config.prefix,
          logger,
          limits: new LlmLimitsTable({
            entries: config.llmLimits?.limits ?? [],
            inline: {
              ...(config.llmRpm !== undefined && { requestsPerMinute: config.llmRpm }),
              ...(config.llmTpm !== undefined && { tokensPerMinute: config.llmTpm }),
              ...(config.llmMaxConcurrency !== undefined && {
                maxConcurrency: config.llmMaxConcurrency,
              }),
            },
            prices: config.priceTable ?? {},
          }),
        });
        return createWebshopEpisodeHandler({
          taskDeps,
          stores,
          agentRuntime: {
            ...(config.llmApiKey ? { apiKey: config.llmApiKey } : {}),
            ...(config.priceTable ? { priceTable: config.priceTable } : {}),
            logger,
            governor,
          },
        });
      },
    );
    await running.finished;
    await governor?.close();
  });

await runCliProgram(program, process.argv);
