import { z } from 'zod';
import { createArtifactStore, s3SettingsFromEnv } from '@benchfleet/artifacts';
import {
  ConfigError,
  createCliProgram,
  flag,
  flagInput,
  flagLabels,
  flagOptions,
  parseConfig,
  runCliProgram,
} from '@benchfleet/core';
import { createBenchmarkRegistry, type BenchmarkDescriptor } from '@benchfleet/benchmark-kit';
import { ModelInputRecorder, noModelInputs } from '@benchfleet/db';
import { serve } from '@benchfleet/queue';
import { telemetryConfigFromEnv, type TelemetryConfig } from '@benchfleet/telemetry';
import { aggregateRun } from '../run-aggregate.js';
import { runLlmTerms } from '../run-limits.js';
import { createBenchmarkTaskHandler } from './benchmark-task-handler.js';
import { startWorkerProcess, type RunningWorker } from './worker-process.js';
import { workerProcessSettings, workerSettings } from './worker-settings.js';

/** Where artifacts go when BENCHFLEET_ARTIFACTS says nothing: beside where the worker runs. */
const DEFAULT_ARTIFACTS_URI = 'file://./.benchfleet/artifacts';

/**
 * Whether the model's input of each LLM call is kept (`llm_calls`). On by default: a step's prompt
 * is what explains its reply, and it stays with the run; off for those who must not keep prompts.
 */
const modelInputSettings = z.object({
  storeModelInputs: flag(z.stringbool({ error: 'expected true or false' }).default(true), {
    flag: '--store-model-inputs <bool>',
    env: 'BENCHFLEET_STORE_MODEL_INPUTS',
    description:
      "store each LLM call's input (messages, tools, parameters; deduplicated per run) with its step (default true)",
  }),
});

/**
 * A benchmark's worker app, whole: `await runBenchmarkWorker(fooBenchmark, process.argv)`. Its CLI
 * has the flags every worker has and the benchmark's own (`worker.flags`), all parsed at start-up
 * with every bad value in one line; then the worker process serves the benchmark's queue with its
 * episode until SIGTERM.
 */
export async function runBenchmarkWorker<
  Config,
  ConfigInput,
  Spec,
  Result,
  WorkerFlags extends z.ZodObject,
>(
  benchmark: BenchmarkDescriptor<Config, ConfigInput, Spec, Result, WorkerFlags>,
  argv: readonly string[],
  env: NodeJS.ProcessEnv = process.env,
): Promise<void> {
  const part = benchmark.worker;
  const common = workerSettings({ workerId: part.workerId, graceS: part.graceS }, env);
  const program = createCliProgram(part.command, part.description);
  for (const option of [
    ...flagOptions(part.flags),
    ...flagOptions(common),
    ...flagOptions(modelInputSettings),
  ])
    program.addOption(option);
  program.action(async (given: Record<string, unknown>) => {
    // Every bad value in one message, the benchmark's and the common ones.
    const problems: string[] = [];
    const parse = <S extends z.ZodType>(
      schema: S,
      input: unknown,
      labels: Record<string, string>,
    ) => {
      try {
        return parseConfig(schema, input, labels);
      } catch (error) {
        if (!(error instanceof ConfigError)) throw error;
        problems.push(...error.problems);
        return undefined;
      }
    };
    const settings = parse(common, flagInput(common, given, env), flagLabels(common));
    const own = parse(part.flags, flagInput(part.flags, given, env), flagLabels(part.flags));
    const inputs = parse(
      modelInputSettings,
      flagInput(modelInputSettings, given, env),
      flagLabels(modelInputSettings),
    );
    let telemetry: TelemetryConfig | undefined;
    try {
      telemetry = telemetryConfigFromEnv(env);
    } catch (error) {
      if (!(error instanceof ConfigError)) throw error;
      problems.push(...error.problems);
    }
    if (problems.length > 0 || !settings || !own || !inputs || !telemetry)
      throw new ConfigError(problems);
    const running = await startBenchmarkWorker(benchmark, settings, own, env, {
      telemetry,
      storeModelInputs: inputs.storeModelInputs,
    });
    await running.finished;
  });
  await runCliProgram(program, argv);
}

/**
 * The process of a benchmark's worker: its queue served with its episode, and the runs whose last
 * task it settles summarised on the spot (the aggregate job is the fallback).
 */
async function startBenchmarkWorker<
  Config,
  ConfigInput,
  Spec,
  Result,
  WorkerFlags extends z.ZodObject,
>(
  benchmark: BenchmarkDescriptor<Config, ConfigInput, Spec, Result, WorkerFlags>,
  common: z.output<ReturnType<typeof workerSettings>>,
  flags: z.output<WorkerFlags>,
  env: NodeJS.ProcessEnv,
  options: {
    /** Tracing (OTEL_* variables, read at the edge); default off. */
    readonly telemetry?: TelemetryConfig;
    /** Keep each LLM call's input (default true). */
    readonly storeModelInputs?: boolean;
  } = {},
): Promise<RunningWorker> {
  const { telemetry } = options;
  const part = benchmark.worker;
  const registry = createBenchmarkRegistry([benchmark]);
  const s3 = s3SettingsFromEnv(env);
  const artifacts = part.artifacts
    ? createArtifactStore(common.artifactsUri ?? DEFAULT_ARTIFACTS_URI, s3 ? { s3 } : {})
    : undefined;
  let close: (() => Promise<void>) | undefined;
  const running = await startWorkerProcess(
    {
      app: part.command,
      migrations: registry.migrations,
      queue: benchmark.job.queue,
      ...workerProcessSettings(common),
      stopWhenLauncherExits: env.npm_command === 'exec',
      concurrency: part.concurrency(flags),
      ...(telemetry ? { telemetry } : {}),
      ...(artifacts ? { artifactStore: artifacts } : {}),
      summarizeRun: async (db, runId) => {
        await aggregateRun(db, registry, runId);
      },
    },
    async ({ db, logger, taskDeps, metrics }) => {
      const runTerms = runLlmTerms(db);
      const modelInputs =
        options.storeModelInputs === false
          ? noModelInputs
          : new ModelInputRecorder({ db, logger: logger.child({ component: 'model-inputs' }) });
      const episodes = await part.setup({
        flags,
        db,
        logger,
        workerId: common.workerId,
        redisUrl: common.redisUrl,
        prefix: common.prefix,
        artifacts,
        spendLimitsOf: runTerms.budgetOf,
        runPricesOf: runTerms.pricesOf,
        modelInputs,
      });
      close = episodes.close?.bind(episodes);
      if (episodes.llmLanes) metrics.watchLlmLanes(episodes.llmLanes);
      return {
        jobs: [serve(benchmark.job, createBenchmarkTaskHandler(benchmark, taskDeps, episodes))],
        ...(episodes.healthCheck ? { healthCheck: episodes.healthCheck } : {}),
        ...(episodes.capabilities ? { capabilities: episodes.capabilities } : {}),
        flush: () => modelInputs.flush(),
      };
    },
  );
  return {
    ...running,
    finished: running.finished.then(async () => {
      await close?.();
    }),
  };
}
