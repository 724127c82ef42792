import type { ColumnType, Generated, Insertable, JSONColumnType, Selectable } from 'kysely';
import type { AttemptStatus, ErrorClass, RunStatus, TaskStatus } from '@benchfleet/core';

export type Timestamp = ColumnType<Date, Date | string | undefined, Date | string>;
type NullableTimestamp = ColumnType<
  Date | null,
  Date | string | null | undefined,
  Date | string | null
>;
export type Json = JSONColumnType<Record<string, unknown>, string, string>;
type NullableJson = ColumnType<
  Record<string, unknown> | null,
  string | null | undefined,
  string | null
>;
/**
 * A jsonb column one schema owns (a benchmark's run config, task spec or result; the run summary):
 * read as `unknown`, so that only that schema's parse gives it a type.
 */
type OwnedJson = ColumnType<unknown, string, string>;
type NullableOwnedJson = ColumnType<unknown, string | null | undefined, string | null>;

interface RunsTable {
  id: string;
  name: string;
  /** A benchmark's registered name. */
  benchmark: string;
  status: ColumnType<RunStatus, RunStatus | undefined, RunStatus>;
  config: OwnedJson;
  model: NullableJson;
  agent: NullableJson;
  code_version: string;
  created_at: Timestamp;
  started_at: NullableTimestamp;
  finished_at: NullableTimestamp;
  summary: NullableOwnedJson;
  /** The spend limits and infra-error budget given at enqueue (owned by `runLimitsSchema`, @benchfleet/runs). */
  limits: NullableOwnedJson;
  /** Prices by model given at enqueue, used by every worker before its own (owned by `priceTableSchema`, @benchfleet/llm-governor). */
  price_table: NullableOwnedJson;
  /** Why workers take no new task of the run: its spend limit is reached, or it is paused on infra errors. */
  halt: ColumnType<RunHalt | null, RunHalt | null | undefined, RunHalt | null>;
  /** The one line saying why, with the numbers. */
  halt_reason: ColumnType<string | null, string | null | undefined, string | null>;
  halted_at: NullableTimestamp;
  /** How many times every task runs as an independent sample (`enqueue --epochs`); 1 before epochs existed. */
  epochs: Generated<number>;
}

export type RunHalt = 'budget' | 'infra';

interface TasksTable {
  run_id: string;
  /** The row's key: the benchmark's task id in epoch 1, `<task id>.epoch<e>` in epoch e > 1. */
  task_id: string;
  /** The benchmark's task id, the same in every epoch (an insert without one: the row's task_id). */
  base_task_id: ColumnType<string, string | undefined, string>;
  /** Which sample of the task this row is (1..runs.epochs). */
  epoch: Generated<number>;
  seq: number;
  domain: string;
  instruction: string;
  spec: OwnedJson;
  status: ColumnType<TaskStatus, TaskStatus | undefined, TaskStatus>;
  final_api_status: string | null;
  attempts: Generated<number>;
  total_steps: Generated<number>;
  reward: number | null;
  success: boolean | null;
  duration_ms: number | null;
  tokens_in: Generated<number>;
  tokens_out: Generated<number>;
  /** null: not known (tokens were used but no price was given). */
  cost_usd: ColumnType<number | null, number | null | undefined, number | null>;
  /** Why an `error` outcome is one (as its last attempt says; `budget` for a task a run's fence ended before it ran). */
  error_class: ColumnType<ErrorClass | null, ErrorClass | null | undefined, ErrorClass | null>;
  answer: string | null;
  result: NullableOwnedJson;
  error: string | null;
  worker_id: string | null;
  external_id: string | null;
  started_at: NullableTimestamp;
  finished_at: NullableTimestamp;
}

interface AttemptsTable {
  run_id: string;
  task_id: string;
  attempt: number;
  job_attempt: number;
  worker_id: string;
  external_id: string | null;
  status: AttemptStatus;
  error_class: ErrorClass | null;
  error: string | null;
  started_at: Timestamp;
  finished_at: NullableTimestamp;
  /** This attempt's LLM spend; its task's are the sums over its attempts. */
  tokens_in: Generated<number>;
  tokens_out: Generated<number>;
  /** null: not known (tokens were used but no price was given). */
  cost_usd: ColumnType<number | null, number | null | undefined, number | null>;
}

/** A rescore of a settled task: the score it replaced beside the new one (migration `task_scores`). */
interface TaskScoresTable {
  id: Generated<number>;
  run_id: string;
  task_id: string;
  /** The attempt whose record was scored (the task's last). */
  attempt: number;
  scorer_version: string;
  success_before: boolean | null;
  reward_before: number | null;
  success: boolean;
  reward: number | null;
  details: Json;
  scored_at: Timestamp;
}

/** Written by each worker's health check: a Postgres that refuses writes fails it. */
interface WorkerHealthTable {
  worker_id: string;
  checked_at: Generated<Timestamp>;
}

interface StepsTable {
  run_id: string;
  task_id: string;
  attempt: number;
  step: number;
  at: Timestamp;
  action: NullableJson;
  text: string | null;
  observation: string | null;
  reward: number | null;
  screenshot_uri: string | null;
  external_id: string | null;
  tokens_in: Generated<number>;
  tokens_out: Generated<number>;
  latency_ms: number | null;
  /** USD of the step's LLM calls; null: not known. */
  cost_usd: ColumnType<number | null, number | null | undefined, number | null>;
}

/** One distinct message, tools list or image of a run's LLM inputs, by the sha256 of its content. */
interface LlmInputBlobsTable {
  run_id: string;
  digest: string;
  kind: 'message' | 'tools' | 'image';
  /** Messages and tools: canonical JSON (images inside replaced by `{"$image": digest}`). */
  body: ColumnType<unknown, string | null, string | null>;
  /** Images: their bytes. */
  data: Buffer | null;
  media_type: string | null;
  bytes: number;
}

/** One LLM call (made or relayed): its input as ordered digests into `llm_input_blobs`. */
interface LlmCallsTable {
  run_id: string;
  task_id: string;
  attempt: number;
  call_no: number;
  step: number | null;
  at: Timestamp;
  model: string;
  message_digests: string[];
  tools_digest: string | null;
  parameters: ColumnType<Record<string, unknown>, string, string>;
  tokens_in: number | null;
  tokens_out: number | null;
}

interface RunSummaryView {
  run_id: string;
  name: string;
  benchmark: string;
  run_status: RunStatus;
  created_at: Date;
  finished_at: Date | null;
  total: number;
  queued: number;
  running: number;
  succeeded: number;
  failed: number;
  cancelled: number;
  errors: number;
  success_rate: number | null;
  avg_reward: number | null;
  avg_steps: number | null;
  avg_duration_seconds: number | null;
  tokens_in: number;
  tokens_out: number;
  /** null when a settled task's cost is not known. */
  cost_usd: number | null;
  /** Tasks cancelled before any attempt started them. */
  never_started: number;
  /** Errors that were infrastructure faults, and tasks a spend limit stopped. */
  infra_failed: number;
  budget_stopped: number;
  /** The second score: success over the settled tasks that ended on the agent's own outcome (no infra fault, no spend limit). */
  success_rate_excluding_infra: number | null;
  /** Cost of the settled tasks that ran ÷ their number × the tasks that run or will; null when unpriced or none ran. */
  projected_cost_usd: number | null;
  halt: RunHalt | null;
  halt_reason: string | null;
}

interface DomainSummaryView {
  run_id: string;
  domain: string;
  total: number;
  succeeded: number;
  failed: number;
  cancelled: number;
  errors: number;
  pending: number;
  success_rate: number | null;
  avg_reward: number | null;
  avg_steps: number | null;
  cost_usd: number | null;
}

/** The shared tables; a benchmark's own tables are its lib's (`db.withTables<ItsTables>()`). */
/** Per run and domain: steps, the episodes they belong to, latency percentiles and tokens. */
interface StepStatsView {
  run_id: string;
  domain: string;
  steps: number;
  episodes: number;
  latency_p50_ms: number | null;
  latency_p95_ms: number | null;
  tokens_in: number;
  tokens_out: number;
}

/** Per task of a run, over its epochs: how many settled and passed, and whether it flipped. */
interface TaskEpochsView {
  run_id: string;
  base_task_id: string;
  domain: string;
  epochs: number;
  settled: number;
  passed: number;
  flipped: boolean | null;
  avg_reward: number | null;
}

/** Per run: pass@1, pass@n, pass^n and the flip rate over its epochs. */
interface RunEpochsView {
  run_id: string;
  epochs: number;
  tasks: number;
  pass_at_1: number | null;
  pass_at_n: number | null;
  pass_hat_n: number | null;
  flip_rate: number | null;
}

export interface DB {
  runs: RunsTable;
  tasks: TasksTable;
  attempts: AttemptsTable;
  steps: StepsTable;
  task_scores: TaskScoresTable;
  worker_health: WorkerHealthTable;
  llm_input_blobs: LlmInputBlobsTable;
  llm_calls: LlmCallsTable;
  run_summary: RunSummaryView;
  domain_summary: DomainSummaryView;
  step_stats: StepStatsView;
  task_epochs: TaskEpochsView;
  run_epochs: RunEpochsView;
}

export type Run = Selectable<RunsTable>;
export type NewRun = Insertable<RunsTable>;
export type Task = Selectable<TasksTable>;
export type NewTask = Insertable<TasksTable>;
export type Attempt = Selectable<AttemptsTable>;
export type Step = Selectable<StepsTable>;
export type NewStep = Insertable<StepsTable>;
export type LlmCallRow = Selectable<LlmCallsTable>;
export type LlmInputBlobRow = Selectable<LlmInputBlobsTable>;
export type RunSummaryRow = Selectable<RunSummaryView>;
export type TaskScoreRow = Selectable<TaskScoresTable>;
