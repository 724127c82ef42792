import type { Logger } from '@benchfleet/core';
import type { AttemptUsage, NewStep, Run, Task, TaskOutcomeRecord } from '@benchfleet/db';
import type { JobContext, TaskPayload } from '@benchfleet/queue';

// What an episode gets and returns. The run-domain lib (`@benchfleet/runs`) builds the context
// around each attempt (its `attempts` row, the steps, the outcome's one conditional write); a
// benchmark's episode only reads it and returns its outcome.

export type StepRecord = Omit<NewStep, 'run_id' | 'task_id' | 'attempt'>;

export interface TaskContext {
  job: JobContext<TaskPayload>;
  task: Task;
  attempt: number;
  /** External id (e.g. a Bytebot task) an earlier attempt of this task left behind. */
  previousExternalId: string | null;
  signal: AbortSignal;
  logger: Logger;
  recordStep(step: StepRecord): void;
  setExternalId(externalId: string): Promise<void>;
  /**
   * What the attempt has spent on LLM calls so far (running totals), told as its calls are made:
   * written to its `attempts` row at once, so that a worker that dies leaves its spend behind, and
   * the attempt's spend when it ends without an outcome of its own (a fault, a hand-back). Never
   * rejects: a write Postgres does not take is logged, and the outcome carries the totals.
   */
  recordUsage(usage: AttemptUsage): Promise<void>;
}

/**
 * What an episode returns. An `error` outcome is the episode's own verdict: `agent` by default, or
 * `permanent` for an input the outside refuses every time (resume leaves both; retry takes them).
 */
export type TaskOutcome = Omit<TaskOutcomeRecord, 'durationMs' | 'errorClass'> & {
  durationMs?: number;
  errorClass?: 'agent' | 'permanent';
};

export type TaskHandler = (context: TaskContext) => Promise<TaskOutcome>;

/** A benchmark's episode context: the run's config and the task's spec read through its own schemas. */
export interface BenchmarkTaskContext<Config, Spec> extends TaskContext {
  readonly run: Run;
  /** The run's config, read through the benchmark's schema (defaults filled in). */
  readonly config: Config;
  readonly spec: Spec;
}

/** The outcome an episode returns, its result typed by the benchmark's result schema. */
export type BenchmarkOutcome<Result> = Omit<TaskOutcome, 'result'> & { result?: Result | null };
