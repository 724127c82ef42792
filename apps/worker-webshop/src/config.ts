import { hostname } from 'node:os';
import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { databaseUrlSchema, logLevelSchema, parseConfig, queuePrefixSchema, redisUrlSchema, SERVICE_ENV_LABELS, serviceEnvInput } from '@benchfleet/core';
import { priceTableSchema } from '@benchfleet/agents';

export interface WebshopWorkerFlags {
  concurrency?: string;
  catalog?: string;
  workerId?: string;
  graceS?: string;
  metricsPort?: string;
  priceTable?: string;
  indexCache?: string;
  productCache?: string;
  postingsCacheMib?: string;
}

const schema = z.object({
  databaseUrl: databaseUrlSchema,
  redisUrl: redisUrlSchema,
  prefix: queuePrefixSchema,
  logLevel: logLevelSchema,
  concurrency: z.coerce.number().int().min(1).max(1024),
  catalog: z.string().min(1).optional(),
  workerId: z.string().regex(/^[A-Za-z0-9_.-]+$/, 'letters, digits, _ . - only'),
  graceMs: z.coerce.number().int().nonnegative(),
  metricsPort: z.coerce.number().int().min(0).max(65535).optional(),
  lockDurationMs: z.coerce.number().int().positive().optional(),
  llmApiKey: z.string().min(1).optional(),
  priceTable: priceTableSchema.optional(),
  indexCacheDir: z.string().min(1),
  productCacheEntries: z.coerce.number().int().min(0),
  postingsCacheMib: z.coerce.number().int().min(0),
});

export type WebshopWorkerConfig = z.output<typeof schema>;

function readPriceTable(source: string | undefined): unknown {
  if (!source) return undefined;
  const text = source.trim().startsWith('{') ? source : readFileSync(source, 'utf8');
  try {
    return JSON.parse(text);
  } catch {
    return 'not JSON';
  }
}

export function loadWebshopWorkerConfig(flags: WebshopWorkerFlags, env: NodeJS.ProcessEnv = process.env): WebshopWorkerConfig {
  return parseConfig(
    schema,
    {
      ...serviceEnvInput(env),
      concurrency: flags.concurrency ?? env.BENCHFLEET_CONCURRENCY ?? 32,
      catalog: flags.catalog ?? (env.WEBSHOP_CATALOG || undefined),
      workerId: flags.workerId ?? env.BENCHFLEET_WORKER_ID ?? `webshop-${hostname()}-${process.pid}`,
      graceMs: Number(flags.graceS ?? env.BENCHFLEET_GRACE_S ?? 60) * 1000,
      metricsPort: flags.metricsPort ?? (env.BENCHFLEET_METRICS_PORT || undefined),
      lockDurationMs: env.BENCHFLEET_LOCK_MS || undefined,
      llmApiKey: env.LLM_API_KEY || undefined,
      priceTable: readPriceTable(flags.priceTable ?? env.LLM_PRICE_TABLE),
      indexCacheDir: flags.indexCache ?? (env.BENCHFLEET_INDEX_CACHE || '.benchfleet/index-cache'),
      productCacheEntries: flags.productCache ?? env.BENCHFLEET_PRODUCT_CACHE ?? 5000,
      postingsCacheMib: flags.postingsCacheMib ?? env.BENCHFLEET_POSTINGS_CACHE_MIB ?? 256,
    },
    {
      ...SERVICE_ENV_LABELS,
      concurrency: '--concurrency',
      catalog: '--catalog',
      workerId: '--worker-id',
      graceMs: '--grace-s',
      metricsPort: '--metrics-port',
      lockDurationMs: 'BENCHFLEET_LOCK_MS',
      priceTable: '--price-table (or LLM_PRICE_TABLE)',
      indexCacheDir: '--index-cache (or BENCHFLEET_INDEX_CACHE)',
      productCacheEntries: '--product-cache (or BENCHFLEET_PRODUCT_CACHE)',
      postingsCacheMib: '--postings-cache-mib (or BENCHFLEET_POSTINGS_CACHE_MIB)',
    },
  );
}
