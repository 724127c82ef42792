import type { Migration } from 'kysely';
import type { z } from 'zod';
import type { ArtifactSettings } from '@benchfleet/artifacts';
import type { Database, Run, SqlStatementList, Task } from '@benchfleet/db';
import type { TaskJobDefinition } from '@benchfleet/queue';
import type { ActionSummary } from './action-summary.js';
import type { BenchmarkDemo } from './benchmark-demo.js';
import type { BenchmarkDisplay } from './benchmark-display.js';
import type { BenchmarkTools } from './benchmark-tools.js';
import type { BenchmarkRegrader } from './run-regrade.js';
import type { BenchmarkGrading } from './run-grading.js';
import type { BenchmarkWorkerPart } from './benchmark-worker-part.js';
import type { BenchmarkScorer } from './task-scoring.js';
import type { RunSummary } from './run-summary.js';

/** What `scheduler enqueue` hands a benchmark to plan a run from. */
interface PlanInput<Flags> {
  /** `--domain`, split at commas. */
  readonly domains: readonly string[];
  readonly maxTasks?: number;
  readonly maxSteps?: number;
  readonly runName?: string;
  /** This benchmark's own flags, parsed by its `enqueueFlags` object (the ones not given are absent). */
  readonly flags: Flags;
}

/** A settled task as `scores()` reads it: its result parsed by the benchmark's result schema (null when it has none, or one the schema refuses). */
export type ScoredTask<Result> = Omit<Task, 'result'> & { readonly result: Result | null };

export interface PlanContext {
  readonly db: Database;
  readonly env: NodeJS.ProcessEnv;
  /**
   * The workers live now (heard from, connected), with what each can do; given by `scheduler
   * enqueue`, absent where nobody can tell (a plan made without Redis).
   */
  readonly liveWorkers?: () => Promise<readonly LiveWorker[]>;
}

/** A live worker as its heartbeat describes it. */
export interface LiveWorker {
  readonly workerId: string;
  readonly queue: string;
  readonly state: 'serving' | 'paused' | 'stopping';
  readonly capabilities: readonly string[];
}

export interface PlannedTask<Spec> {
  readonly taskId: string;
  readonly domain: string;
  readonly instruction: string;
  readonly spec: Spec;
}

interface RunPlan<ConfigInput, Spec> {
  readonly name: string;
  /** Parsed by the benchmark's run-config schema before it is stored: defaults are added there. */
  readonly config: ConfigInput;
  readonly model: Record<string, unknown> | null;
  readonly agent: Record<string, unknown> | null;
  readonly tasks: readonly PlannedTask<Spec>[];
}

export interface ExportContext<Config> {
  readonly db: Database;
  readonly run: Run;
  readonly config: Config;
  /** The run's summary, computed from the rows just now. */
  readonly summary: RunSummary;
  /** A fresh directory to write into; it becomes the output directory only if the export succeeds. */
  readonly dir: string;
  readonly artifacts: ArtifactSettings;
  /** The run's benchmark's grading, when it has one (generic exports write the grades with it). */
  readonly grading?: BenchmarkGrading;
  progress(done: number, total: number): void;
}

export interface ExportReport {
  /** Tasks written. */
  readonly exported: number;
  /** Tasks left out because they have no outcome yet. */
  readonly unfinished: number;
  /** Things that could not be exported (a screenshot missing from the artifact store); each is also written into the export. */
  readonly problems: readonly string[];
}

export interface RunExporter<Config> {
  readonly description: string;
  /**
   * A file every export of this format holds at its top: an existing --out directory that holds
   * it is taken for an earlier export and replaced; any other non-empty directory is refused.
   */
  readonly signatureFile: string;
  write(context: ExportContext<Config>): Promise<ExportReport>;
}

/**
 * Everything the fleet knows about one benchmark, in one place: defined in the benchmark's own
 * lib and registered once. The scheduler, the job catalog, status, cancel, the reconciler and the
 * aggregation iterate the registry and never ask which benchmark a run is.
 */
export interface BenchmarkDescriptor<
  Config = unknown,
  ConfigInput = unknown,
  Spec = unknown,
  Result = unknown,
  WorkerFlags extends z.ZodObject = z.ZodObject,
  EnqueueFlags extends z.ZodObject = z.ZodObject,
> {
  /** Stored in `runs.benchmark`; never renamed. Lower-case letters, digits and `-`. */
  readonly name: string;
  readonly title: string;
  /** Its task job: queue, job name, retries, deadline (persisted in Redis: never renamed). */
  readonly job: TaskJobDefinition;
  /** Owns `runs.config`: written through it at enqueue, read through it by workers and exports. Its defaults are the only ones. */
  readonly runConfig: z.ZodType<Config, ConfigInput>;
  /** Owns `tasks.spec`. */
  readonly taskSpec: z.ZodType<Spec>;
  /** Owns `tasks.result`, what an episode records beside the outcome. */
  readonly taskResult: z.ZodType<Result>;
  /** What counts as a success, said so that nobody mistakes it for another benchmark's score. */
  readonly success: { readonly label: string; readonly meaning: string };
  /** Whether a task's reward says more than its success (WebShop's partial rewards do). */
  readonly rewardIsPartial: boolean;
  /** How viewers (the dashboard) show its runs. */
  readonly display: BenchmarkDisplay;
  /**
   * Its flags of `scheduler enqueue`: each field `flag(schema, { flag, description, env? })`, the
   * schema taking the text the user typed (`parsedText(positiveInteger)`, `oneOf([...])`) and
   * optional; `plan()` and `preflight()` get them parsed, typed by this object.
   */
  readonly enqueueFlags: EnqueueFlags;
  /**
   * The domains `--domain` may name, and where they come from (WebShop: "catalog demo"); tells the
   * benchmark of a run from `--domain` alone.
   */
  domains(
    context: PlanContext,
  ): Promise<{ readonly names: readonly string[]; readonly source?: string }>;
  /** Turns CLI input into tasks; bad input is a UsageError naming the flag, the value and the fix. */
  plan(
    input: PlanInput<z.output<EnqueueFlags>>,
    context: PlanContext,
  ): Promise<RunPlan<ConfigInput, Spec>>;
  /**
   * Checks made once at enqueue, before anything is written (an LLM endpoint that answers), on the
   * planned run and the benchmark's own flags; a failure is a UsageError saying what to fix.
   */
  preflight?(
    run: {
      config: Config;
      agent: Record<string, unknown> | null;
      flags: z.output<EnqueueFlags>;
    },
    context: PlanContext,
  ): Promise<void>;
  /** The benchmark's own numbers for the run summary, from its settled tasks. */
  scores?(tasks: readonly ScoredTask<Result>[]): Record<string, number>;
  readonly exporters: Readonly<Record<string, RunExporter<Config>>>;
  /** Graded runs: the grade beside the agent's word in the summary, status, compare and exports. */
  readonly grading?: BenchmarkGrading;
  /**
   * Decides a settled task's success and reward from what its episode stored, apart from the
   * episode: applied when an attempt ends in success or failed (its word replaced by the score),
   * and again by `scheduler rescore RUN`. Without one the episode's own word stands.
   */
  readonly score?: BenchmarkScorer<Config, Spec, Result>;
  /** `scheduler regrade RUN`: scores a run's saved end states again (graded OSWorld; `rescore` routes to it). */
  readonly regrade?: BenchmarkRegrader;
  /** Its tools, `scheduler <name> …` (WebShop: catalog import; OSWorld: dataset extraction). */
  readonly tools?: BenchmarkTools;
  /**
   * Its own tables, as migrations (`migrations/<timestamp>_<what>.ts`): the registry merges them
   * with the core's in name order, and `scheduler migrate` runs them. Names are never changed.
   */
  readonly migrations?: Readonly<Record<string, Migration>>;
  /**
   * Every statement its repositories build, with example arguments (`SqlStatementList`,
   * @benchfleet/db), loaded only by the SQL snapshot test: its snapshots sit in its own folder.
   */
  readonly sqlStatements?: () => Promise<SqlStatementList>;
  /**
   * What a step's span says the agent did, read from the action as it records it (none: no kind,
   * the action as text).
   */
  readonly summarizeAction?: (action: unknown) => ActionSummary;
  /** `scheduler demo`: its data, workers and run (the first registered benchmark offering one runs). */
  readonly demo?: BenchmarkDemo;
  /** Its worker: flags, setup → episode; run by `runBenchmarkWorker` (`@benchfleet/runs`). */
  readonly worker: BenchmarkWorkerPart<Config, Spec, Result, WorkerFlags>;
}

/**
 * A descriptor whatever its types, as registries and the code that iterates them hold it: shared
 * code only passes values between a descriptor's own schema and its own functions.
 */
export type AnyBenchmark = BenchmarkDescriptor<unknown, unknown, unknown, unknown>;

/** Checks a descriptor's types where it is written: `export const x = defineBenchmark({...})`. */
export function defineBenchmark<
  Config,
  ConfigInput,
  Spec,
  Result,
  WorkerFlags extends z.ZodObject,
  EnqueueFlags extends z.ZodObject,
>(
  descriptor: BenchmarkDescriptor<Config, ConfigInput, Spec, Result, WorkerFlags, EnqueueFlags>,
): BenchmarkDescriptor<Config, ConfigInput, Spec, Result, WorkerFlags, EnqueueFlags> {
  return descriptor;
}
