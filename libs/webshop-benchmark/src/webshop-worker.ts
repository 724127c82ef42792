import { hostname } from 'node:os';
import { z } from 'zod';
import { BadTaskDataError, errorMessage, flag, PermanentError } from '@benchfleet/core';
import type {
  BenchmarkOutcome,
  BenchmarkTaskContext,
  BenchmarkWorkerPart,
} from '@benchfleet/benchmark-kit';
import { limitsTableOf, LlmGovernor, llmGovernorFlagShape } from '@benchfleet/llm-governor';
import type { ModelInputSink } from '@benchfleet/db';
import { runWebshopEpisode } from '@benchfleet/webshop';
import { createAgent, type AgentRuntime, type WebshopAgent } from '@benchfleet/webshop-agents';
import { openStoreFromSnapshot, StoreCache } from './catalog-store-loader.js';
import { WebshopCatalogRepository } from './webshop-catalog-repository.js';
import { webshopSettleScorer } from './webshop-scorer.js';
import type { WebshopRunConfig, WebshopTaskResult, WebshopTaskSpec } from './webshop-run-config.js';

const WHOLE = 'expected a whole number, 0 or more';
const wholeNumber = z.coerce.number({ error: WHOLE }).int(WHOLE).min(0, WHOLE);
const CONCURRENCY = 'expected a whole number from 1 to 1024';

/** `worker-webshop`'s own flags (besides those every worker has). */
export const webshopWorkerFlags = z.object({
  concurrency: flag(
    z.coerce
      .number({ error: CONCURRENCY })
      .int(CONCURRENCY)
      .min(1, CONCURRENCY)
      .max(1024, CONCURRENCY)
      .default(32),
    {
      flag: '--concurrency <n>',
      env: 'BENCHFLEET_CONCURRENCY',
      description: 'episodes at once (default 32)',
    },
  ),
  catalog: flag(z.string().min(1).optional(), {
    flag: '--catalog <id>',
    env: 'WEBSHOP_CATALOG',
    description:
      'catalog to load at start (default: the latest imported; others load on first use)',
  }),
  indexCache: flag(z.string().min(1).default('.benchfleet/index-cache'), {
    flag: '--index-cache <dir>',
    env: 'BENCHFLEET_INDEX_CACHE',
    description:
      'where this machine keeps copies of catalog search snapshots (default .benchfleet/index-cache)',
  }),
  productCache: flag(wholeNumber.default(5000), {
    flag: '--product-cache <n>',
    env: 'BENCHFLEET_PRODUCT_CACHE',
    description: 'products kept in memory, least recently used dropped first (default 5000)',
  }),
  postingsCacheMib: flag(wholeNumber.default(256), {
    flag: '--postings-cache-mib <n>',
    env: 'BENCHFLEET_POSTINGS_CACHE_MIB',
    description:
      'MiB of search posting lists kept in memory; the rest is read from the snapshot file (default 256)',
  }),
  ...llmGovernorFlagShape,
  // From this worker's environment only, never from a job; never logged.
  llmApiKey: flag(z.string().min(1).optional(), {
    flag: null,
    env: 'LLM_API_KEY',
    description: "the LLM agent's key",
  }),
});

interface WebshopEpisodeDeps {
  stores: StoreCache;
  /** The API key, price table and LLM governor: from this worker's environment, never from the job. */
  agentRuntime: AgentRuntime;
  /** Where each decision's LLM call input goes (one call per step: its number is the step's). */
  modelInputs: ModelInputSink;
}

/**
 * The goal's data as the cause of an episode's error, when it is: the store and the reward read
 * nothing else that could throw a `TypeError` or a `RangeError` (a field missing or of the wrong
 * kind), while every fault of a service or the LLM arrives as a `TransientError` or a
 * `PermanentError`. A network `TypeError` (fetch's, which carries its cause) is not the goal's.
 */
function badGoalData(
  error: unknown,
  goalIndex: number,
  catalogId: string,
): BadTaskDataError | undefined {
  if (!(error instanceof TypeError || error instanceof RangeError)) return undefined;
  if (error.cause !== undefined) return undefined;
  return new BadTaskDataError(
    `goal ${goalIndex} of WebShop catalog ${catalogId}`,
    `the episode threw ${error.name}: ${error.message}`,
  );
}

/** The `webshop-episode` job: one goal played by the run's agent on the shared store. */
function webshopEpisode(
  deps: WebshopEpisodeDeps,
): (
  context: BenchmarkTaskContext<WebshopRunConfig, WebshopTaskSpec>,
) => Promise<BenchmarkOutcome<WebshopTaskResult>> {
  const agents = new Map<string, WebshopAgent>();
  const agentOf = (runId: string, config: unknown): WebshopAgent => {
    let agent = agents.get(runId);
    if (!agent) {
      try {
        agent = createAgent(config ?? { kind: 'rule' }, deps.agentRuntime);
      } catch (error) {
        throw new PermanentError(
          `run ${runId} has an invalid agent config: ${errorMessage(error)}`,
        );
      }
      agents.set(runId, agent);
    }
    return agent;
  };

  return async (context) => {
    const { config, spec, run } = context;
    const agent = agentOf(run.id, run.agent);
    const { store } = await deps.stores.get(config.catalog_id);
    const result = await runWebshopEpisode({
      store,
      agent,
      goalIndex: spec.goal_index,
      maxSteps: config.max_steps,
      observationMode: config.observation_mode,
      signal: context.signal,
      llm: {
        attribution: { runId: run.id, taskId: context.task.task_id, attempt: context.attempt },
      },
      onStep: (step) => {
        if (step.modelInput !== undefined)
          deps.modelInputs.record({
            owner: { runId: run.id, taskId: context.task.task_id, attempt: context.attempt },
            callNo: step.step,
            step: step.step,
            at: step.modelInput.at,
            model: step.modelInput.model,
            request: step.modelInput.request,
            tokensIn: step.tokensIn,
            tokensOut: step.tokensOut,
          });
        context.recordStep({
          step: step.step,
          action: JSON.stringify(step.action),
          text: step.raw,
          observation: step.observation,
          reward: step.reward,
          tokens_in: step.tokensIn,
          tokens_out: step.tokensOut,
          // Each step priced as the governor priced its calls: `status` sums the run's steps.
          cost_usd: step.costUsd,
          latency_ms: step.latencyMs,
        });
      },
    }).catch((error: unknown) => {
      throw badGoalData(error, spec.goal_index, config.catalog_id) ?? error;
    });
    return {
      status: result.success ? 'success' : 'failed',
      finalApiStatus: result.stopReason === 'bought' ? 'BOUGHT' : 'STEP_LIMIT',
      totalSteps: result.steps,
      reward: result.reward,
      success: result.success,
      tokensIn: result.tokensIn,
      tokensOut: result.tokensOut,
      costUsd: result.costUsd,
      error:
        result.stopReason === 'step_limit'
          ? `step limit of ${config.max_steps} reached without buying`
          : null,
      result: {
        goal_index: spec.goal_index,
        stop_reason: result.stopReason,
        purchased_asin: result.purchase?.asin ?? null,
        purchased_options: result.purchase?.options ?? null,
        price: result.purchase?.price ?? null,
        reward_info: result.purchase?.rewardInfo ?? null,
        invalid_steps: result.invalidSteps,
        agent: agent.name,
      },
    };
  };
}

/** The WebShop worker: stateless, many episodes at once on the catalogs it opens from Postgres. */
export const webshopWorker: BenchmarkWorkerPart<
  WebshopRunConfig,
  WebshopTaskSpec,
  WebshopTaskResult,
  typeof webshopWorkerFlags
> = {
  command: 'worker-webshop',
  description:
    'runs WebShop episodes from the queue: stateless, many at once, every step to Postgres',
  flags: webshopWorkerFlags,
  workerId: {
    default: () => `webshop-${hostname()}-${process.pid}`,
    shown: 'webshop-<hostname>-<pid>',
  },
  graceS: 60,
  concurrency: (flags) => flags.concurrency,
  async setup({ flags, db, logger, redisUrl, prefix, spendLimitsOf, runPricesOf, modelInputs }) {
    const stores = new StoreCache(
      (catalogId) =>
        openStoreFromSnapshot(db, catalogId, {
          cacheDir: flags.indexCache,
          productCacheEntries: flags.productCache,
          postingsCacheBytes: flags.postingsCacheMib * 2 ** 20,
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
    const preload = flags.catalog ?? (await new WebshopCatalogRepository(db).latestId());
    if (preload) await stores.get(preload);
    else
      logger.warn(
        'no WebShop catalog imported yet: it will be loaded when the first job names one',
      );
    // One brake for every LLM call of the fleet: limits, Retry-After and spend shared in Redis.
    const governor = new LlmGovernor({
      redisUrl,
      prefix,
      logger,
      // Every call of a task is held to its run's spend limits, checked before and after it.
      budgetOf: spendLimitsOf,
      // Priced as the run was at enqueue; this worker's own prices only for models it left out.
      pricesOf: runPricesOf,
      limits: limitsTableOf(flags),
    });
    return {
      episode: webshopEpisode({
        stores,
        agentRuntime: {
          ...(flags.llmApiKey ? { apiKey: flags.llmApiKey } : {}),
          ...(flags.priceTable ? { priceTable: flags.priceTable } : {}),
          logger,
          governor,
        },
        modelInputs,
      }),
      // At settle the purchase is scored on the store the episode played: no Postgres read.
      score: webshopSettleScorer(stores),
      llmLanes: governor,
      close: () => governor.close(),
    };
  },
};
