import { hostname } from 'node:os';
import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { parseConfig, UsageError } from '@benchfleet/core';
import {
  WORKER_CONFIG_LABELS,
  workerConfigInput,
  workerConfigShape,
  type WorkerFlags,
} from '@benchfleet/runs';
import { limitsFileSchema, priceTableSchema, readLimitsFile } from '@benchfleet/llm-governor';

export interface WebshopWorkerFlags extends WorkerFlags {
  concurrency?: string;
  catalog?: string;
  priceTable?: string;
  indexCache?: string;
  productCache?: string;
  postingsCacheMib?: string;
  llmLimits?: string;
  llmRpm?: string;
  llmTpm?: string;
  llmMaxConcurrency?: string;
}

const WHOLE = 'expected a whole number, 0 or more';
const wholeNumber = z.coerce.number({ error: WHOLE }).int(WHOLE).min(0, WHOLE);
const POSITIVE = 'expected a whole number, 1 or more';
const positiveNumber = z.coerce.number({ error: POSITIVE }).int(POSITIVE).min(1, POSITIVE);

const schema = z.object({
  ...workerConfigShape,
  concurrency: z.coerce
    .number({ error: 'expected a whole number from 1 to 1024' })
    .int('expected a whole number from 1 to 1024')
    .min(1, 'expected a whole number from 1 to 1024')
    .max(1024, 'expected a whole number from 1 to 1024'),
  catalog: z.string().min(1).optional(),
  llmApiKey: z.string().min(1).optional(),
  priceTable: priceTableSchema.optional(),
  indexCacheDir: z.string().min(1),
  productCacheEntries: wholeNumber,
  postingsCacheMib: wholeNumber,
  llmLimits: limitsFileSchema.optional(),
  llmRpm: positiveNumber.optional(),
  llmTpm: positiveNumber.optional(),
  llmMaxConcurrency: positiveNumber
    .max(100_000, 'expected a whole number from 1 to 100000')
    .optional(),
});

export type WebshopWorkerConfig = z.output<typeof schema>;

function readPriceTable(source: string | undefined): unknown {
  if (!source) return undefined;
  let text = source;
  if (!source.trim().startsWith('{')) {
    try {
      text = readFileSync(source, 'utf8');
    } catch {
      throw new UsageError(
        `--price-table ${source}: no such file; give a JSON file or inline JSON like {"gpt-4o":{"inputUsdPerMillion":2.5,"outputUsdPerMillion":10}}`,
      );
    }
  }
  try {
    return JSON.parse(text);
  } catch {
    return 'not JSON';
  }
}

function readLlmLimits(path: string | undefined): unknown {
  if (!path) return undefined;
  try {
    return readLimitsFile(path);
  } catch (error) {
    throw new UsageError(`--llm-limits ${error instanceof Error ? error.message : String(error)}`);
  }
}

export function loadWebshopWorkerConfig(
  flags: WebshopWorkerFlags,
  env: NodeJS.ProcessEnv = process.env,
): WebshopWorkerConfig {
  return parseConfig(
    schema,
    {
      ...workerConfigInput(flags, env, {
        workerId: `webshop-${hostname()}-${process.pid}`,
        graceS: 60,
      }),
      concurrency: flags.concurrency ?? env.BENCHFLEET_CONCURRENCY ?? 32,
      catalog: flags.catalog ?? (env.WEBSHOP_CATALOG || undefined),
      llmApiKey: env.LLM_API_KEY || undefined,
      priceTable: readPriceTable(flags.priceTable ?? env.LLM_PRICE_TABLE),
      indexCacheDir: flags.indexCache ?? (env.BENCHFLEET_INDEX_CACHE || '.benchfleet/index-cache'),
      productCacheEntries: flags.productCache ?? env.BENCHFLEET_PRODUCT_CACHE ?? 5000,
      postingsCacheMib: flags.postingsCacheMib ?? env.BENCHFLEET_POSTINGS_CACHE_MIB ?? 256,
      llmLimits: readLlmLimits(flags.llmLimits ?? (env.LLM_LIMITS || undefined)),
      llmRpm: flags.llmRpm ?? (env.LLM_RPM || undefined),
      llmTpm: flags.llmTpm ?? (env.LLM_TPM || undefined),
      llmMaxConcurrency: flags.llmMaxConcurrency ?? (env.LLM_MAX_CONCURRENCY || undefined),
    },
    {
      ...WORKER_CONFIG_LABELS,
      concurrency: '--concurrency (or BENCHFLEET_CONCURRENCY)',
      catalog: '--catalog (or WEBSHOP_CATALOG)',
      priceTable: '--price-table (or LLM_PRICE_TABLE)',
      indexCacheDir: '--index-cache (or BENCHFLEET_INDEX_CACHE)',
      productCacheEntries: '--product-cache (or BENCHFLEET_PRODUCT_CACHE)',
      postingsCacheMib: '--postings-cache-mib (or BENCHFLEET_POSTINGS_CACHE_MIB)',
      llmLimits: '--llm-limits (or LLM_LIMITS)',
      llmRpm: '--llm-rpm (or LLM_RPM)',
      llmTpm: '--llm-tpm (or LLM_TPM)',
      llmMaxConcurrency: '--llm-max-concurrency (or LLM_MAX_CONCURRENCY)',
    },
  );
}
