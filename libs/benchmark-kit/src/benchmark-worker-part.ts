import type { z } from 'zod';
import type { ArtifactStore } from '@benchfleet/artifacts';
import type { FlagMeta, Logger } from '@benchfleet/core';
import type { Database, ModelInputSink } from '@benchfleet/db';
import type { GovernorSnapshot, PriceTable } from '@benchfleet/llm-governor';
import type { HealthCheck } from '@benchfleet/queue';
import type { BenchmarkOutcome, BenchmarkTaskContext } from './episode-context.js';
import type { BenchmarkScorer } from './task-scoring.js';

/** What a worker's setup gets: its own flags parsed, and the services the worker process opened. */
interface WorkerSetupContext<Flags> {
  /** The benchmark's worker flags, parsed once at start-up by their zod object. */
  readonly flags: Flags;
  readonly db: Database;
  readonly logger: Logger;
  readonly workerId: string;
  /** The fleet's Redis and queue prefix, for what the benchmark keeps there (the LLM governor). */
  readonly redisUrl: string;
  readonly prefix: string;
  /** The artifact store (BENCHFLEET_ARTIFACTS), when the worker part asks for one. */
  readonly artifacts: ArtifactStore | undefined;
  /**
   * The spend limits (USD) of the run a governed LLM call is for, as enqueued: give it to the LLM
   * governor (`budgetOf`) so every call of a task is checked before and after it.
   */
  readonly spendLimitsOf: (attribution: {
    readonly runId: string;
  }) => Promise<{ readonly runUsd?: number; readonly taskUsd?: number } | undefined>;
  /**
   * The prices (USD per 1M tokens, by model) stored with the run at enqueue: give them to the LLM
   * governor (`pricesOf`) so the run's calls are priced by them before the worker's own table.
   */
  readonly runPricesOf: (attribution: {
    readonly runId: string;
  }) => Promise<PriceTable | undefined>;
  /**
   * Where each LLM call's input goes (`llm_calls`): record every call the episodes make or relay.
   * Records nothing when the worker was started with `--store-model-inputs false`.
   */
  readonly modelInputs: ModelInputSink;
}

/** Where a worker's governed LLM calls stand, for its `/metrics` (the governor's `snapshot()`). */
export interface LlmLanesSource {
  snapshot(): Promise<GovernorSnapshot>;
  /**
   * A relay's calls refused because no attempt ran on its stack (an orphaned or cancelled agent
   * task), since the worker started.
   */
  refusedWithoutAttempt?(): number;
  /** A relay's calls refused because they were not the running attempt's own (another agent task's). */
  refusedForeignCalls?(): number;
}

/** What setup hands the worker process: the episode it runs for each task, and what it checks. */
interface WorkerEpisodes<Config, Spec, Result> {
  /** One task: typed config and spec in, the outcome out; a throw is a fault (see TaskOutcome). */
  episode(context: BenchmarkTaskContext<Config, Spec>): Promise<BenchmarkOutcome<Result>>;
  /**
   * What else must be up besides Postgres, Redis and the artifact store (OSWorld: its Bytebot
   * stack): while it fails the worker pauses and says why.
   */
  readonly healthCheck?: HealthCheck;
  /**
   * What this worker can do, told in its heartbeat so that `scheduler enqueue` can see it (OSWorld:
   * `osworld-grade` when it was given a desktop server).
   */
  readonly capabilities?: readonly string[];
  /** After the worker stopped: release what setup opened. */
  close?(): Promise<void>;
  /** The LLM governor its episodes call through: its lanes go to the worker's `/metrics`. */
  readonly llmLanes?: LlmLanesSource;
  /**
   * The scorer applied when one of its tasks settles, reading what this worker already holds
   * (WebShop: the catalog store its episodes share) instead of Postgres: the same rules and
   * version as the descriptor's `score`, which `scheduler rescore` applies from Postgres alone.
   * Default: the descriptor's.
   */
  readonly score?: BenchmarkScorer<Config, Spec, Result>;
}

/** A worker's id when none is given. */
export interface WorkerIdDefault {
  /** The id (`webshop-<hostname>-<pid>`); `env` is the process's environment. */
  default(env: NodeJS.ProcessEnv): string;
  /** The id's shape, for `--help`: `webshop-<hostname>-<pid>`. */
  readonly shown: string;
  /** How it is given, when not `--worker-id` / BENCHFLEET_WORKER_ID (OSWorld: `--stack-id`). */
  readonly flag?: FlagMeta;
}

/**
 * A benchmark's worker: its CLI (`worker-<name>`), its own flags and the setup that turns them into
 * the episode each task runs. `runBenchmarkWorker` (`@benchfleet/runs`) does the rest: the flags
 * every worker has, the services, the attempts' records, health, metrics and SIGTERM.
 */
export interface BenchmarkWorkerPart<Config, Spec, Result, Flags extends z.ZodObject> {
  /** The CLI's name, as its bin: `worker-webshop`. */
  readonly command: string;
  /** What it does, for `--help`. */
  readonly description: string;
  /** Its own settings: each field wrapped in `flag()` (its flag, description, environment variable). */
  readonly flags: Flags;
  /** Its worker id when none is given, and how the id is given when not `--worker-id`. */
  readonly workerId: WorkerIdDefault;
  /** Seconds active episodes may finish after SIGTERM before they are handed back, by default. */
  readonly graceS: number;
  /** Episodes at once. */
  concurrency(flags: z.output<Flags>): number;
  /** Whether it writes artifacts (screenshots): the store is opened and health-checked for it. */
  readonly artifacts?: boolean;
  /** Before the first job: the clients and caches its episodes share, checked or warmed. */
  setup(
    context: WorkerSetupContext<z.output<Flags>>,
  ): Promise<WorkerEpisodes<Config, Spec, Result>>;
}
