import { UsageError } from '@benchfleet/core';
import {
  describeGraded,
  type AnyBenchmark,
  type BenchmarkRegistry,
  type EpochSummary,
  type GradedSummary,
} from '@benchfleet/benchmark-kit';
import {
  RunsRepository,
  StepsRepository,
  TasksRepository,
  type Database,
  type RunSummaryRow,
} from '@benchfleet/db';
import {
  AGGREGATE_QUEUE,
  readWorkerBeats,
  taskJobId,
  type JobProducer,
  type WorkerBeat,
} from '@benchfleet/queue';
import type { GovernorSnapshot, LaneSnapshot, SpendTotals } from '@benchfleet/llm-governor';
import { joblessTasks } from './run-reconciler.js';
import { readRunLimits, type RunLimits } from './run-limits.js';
import { epochSummary, epochSummaryLine } from './task-epochs.js';
import { dollars, statusNotes } from './run-status-notes.js';

/** What status reads of the LLM governor (its snapshot and spend in Redis); an `LlmGovernor` is one. */
export interface GovernorReader {
  snapshot(): Promise<GovernorSnapshot>;
  runSpend(runId: string): Promise<SpendTotals>;
}

/** The run's spend against its limits. */
interface RunSpend {
  /**
   * Spent so far, as the run's steps were priced in Postgres (every attempt's, running ones' too):
   * the one figure status gives. Null: unpriced.
   */
  readonly spentUsd: number | null;
  /** The steps that used LLM tokens, and those of them (or governed calls) with no price. */
  readonly llmSteps: number;
  readonly unpricedCalls: number;
  /** The settled tasks' cost ÷ the settled tasks that ran × the tasks that run or will; null: unpriced or none ran yet. */
  readonly projectedUsd: number | null;
  readonly limitUsd: number | null;
  readonly taskLimitUsd: number | null;
  /** Spent past the run's limit (0 within it). */
  readonly overshootUsd: number;
  /** The overshoot in calls at the run's mean call cost (the governor's count of calls). */
  readonly overshootCalls: number | null;
  /** The run's model has no price: its cost is unknown, never $0. */
  readonly unpriced: boolean;
}

/** What the run's steps were priced at (`StepsRepository.pricedSpend`). */
type PricedSteps = Awaited<ReturnType<StepsRepository['pricedSpend']>>;

/** The run's two scores: infra failures (and spend-limit stops) counted as failures, and excluded. */
interface RunScores {
  readonly successRate: number | null;
  readonly successRateExcludingInfra: number | null;
  readonly infraFailed: number;
  readonly budgetStopped: number;
}

/** A task between two attempts: its last one failed, and BullMQ runs the next after a back-off. */
interface RetryingTask {
  taskId: string;
  failedAttempt: number;
  /** The failed attempt's error, as recorded. */
  error: string | null;
  /** The attempt BullMQ runs next, and how many it makes in all. */
  nextAttempt: number;
  maxAttempts: number;
  /** When the back-off ends (ISO); null when the job is not waiting out a delay (a worker may take it now). */
  retryAt: string | null;
}

export interface RunStatus {
  run: RunSummaryRow;
  /** What `succeeded` counts, e.g. "agent-reported success". */
  successLabel: string;
  /** Whether the mean reward says more than the success rate (partial rewards). */
  rewardIsPartial: boolean;
  queueName: string;
  done: number;
  pending: number;
  etaSeconds: number | null;
  /** Job counts of the run's queue (all runs on it, by state). */
  queue: Record<string, number>;
  /** Open tasks that no waiting, delayed or active job will run. */
  jobless: number;
  /** Tasks counted as running in `run` that are waiting to be retried, not running. */
  retrying: RetryingTask[];
  /** The workers heard from on the run's queue, and the aggregate workers. */
  workers: WorkerBeat[];
  /** What is wrong, said plainly: nobody consumes the queue, paused workers and why, lost jobs. */
  notes: string[];
  /** A graded run's grade beside the agent's word; absent for a run that is not graded. */
  graded?: GradedSummary;
  /** A run of several epochs: pass@k, pass^k and flip rate over what has settled so far. */
  epochs?: EpochSummary;
  limits: RunLimits;
  /** Why workers take no new task of the run (its spend limit, or paused on infra errors), in one line. */
  halt: { kind: 'budget' | 'infra'; reason: string } | null;
  scores: RunScores;
  spend: RunSpend;
  /** The LLM lanes (provider, key fingerprint, model) this run's calls went through; empty when the governor was not read. */
  lanes: readonly LaneSnapshot[];
}

export async function latestRunId(db: Database): Promise<string> {
  const [latest] = await new RunsRepository(db).list(1);
  if (!latest) throw new UsageError('no runs yet: start one with `scheduler enqueue`');
  return latest.run_id;
}

/**
 * Where a run stands, from Postgres, with what the fleet says of it (workers' heartbeats). `quick`
 * skips asking Redis about every open task's job (a live progress bar refreshes often).
 */
export async function readRunStatus(
  db: Database,
  producer: JobProducer,
  registry: BenchmarkRegistry,
  runId: string,
  options: { quick?: boolean; governor?: GovernorReader } = {},
): Promise<RunStatus> {
  const runs = new RunsRepository(db);
  const run = await runs.summary(runId);
  if (!run) throw new UsageError(`run ${runId} not found; \`scheduler runs\` lists the runs`);
  const runRow = await runs.get(runId);
  const limits = readRunLimits(runRow?.limits);
  const governed = options.governor
    ? await Promise.all([options.governor.runSpend(runId), options.governor.snapshot()]).catch(
        () => undefined,
      )
    : undefined;
  const benchmark = registry.get(run.benchmark);
  const done = run.total - run.queued - run.running;
  const queue = await producer.counts(benchmark.job.queue);
  const etaSeconds = etaSecondsOf(run.total, done, runRow?.started_at?.getTime());
  const pending = run.total - done;
  const jobless =
    pending > 0 && !options.quick
      ? (await joblessTasks(db, producer, benchmark.job.queue, runId)).length
      : 0;
  const retrying = await retryingTasks(db, producer, benchmark, run);
  const beats = await readWorkerBeats(producer.connection, producer.prefix, (name) =>
    producer.connectedWorkers(name),
  );
  const workers = beats.filter(
    (beat) => beat.queue === benchmark.job.queue || beat.queue === AGGREGATE_QUEUE,
  );
  const notes = await statusNotes(producer, benchmark, { run, limits, workers, pending, jobless });
  const fullRun = benchmark.grading ? await runs.get(runId) : undefined;
  const graded = fullRun ? await benchmark.grading?.summarize(db, fullRun) : null;
  const epochs =
    runRow && runRow.epochs > 1
      ? epochSummary(runRow.epochs, await new TasksRepository(db).listByRun(runId))
      : undefined;
  return {
    run,
    successLabel: benchmark.success.label,
    rewardIsPartial: benchmark.rewardIsPartial,
    queueName: benchmark.job.queue,
    done,
    pending,
    etaSeconds:
      jobless > 0 || notes.some((note) => note.startsWith('no worker')) ? null : etaSeconds,
    queue,
    jobless,
    retrying,
    workers,
    notes,
    ...(graded ? { graded } : {}),
    limits,
    halt: run.halt === null ? null : { kind: run.halt, reason: run.halt_reason ?? run.halt },
    scores: {
      successRate: run.success_rate,
      successRateExcludingInfra: run.success_rate_excluding_infra,
      infraFailed: run.infra_failed,
      budgetStopped: run.budget_stopped,
    },
    spend: runSpendOf(run, limits, await new StepsRepository(db).pricedSpend(runId), governed?.[0]),
    lanes: runLanesOf(governed?.[0], governed?.[1]),
    ...(graded ? { graded } : {}),
    ...(epochs ? { epochs } : {}),
  };
}

/** When the run should end at the rate its tasks have settled so far (none before one has, or once all have). */
function etaSecondsOf(total: number, done: number, startedAt: number | undefined): number | null {
  if (!startedAt || done <= 0 || done >= total) return null;
  const rate = done / ((Date.now() - startedAt) / 1000);
  return Math.round((total - done) / rate);
}

/** The run's tasks between two attempts: the attempt that failed, and when BullMQ runs the next. */
async function retryingTasks(
  db: Database,
  producer: JobProducer,
  benchmark: AnyBenchmark,
  run: RunSummaryRow,
): Promise<RetryingTask[]> {
  const runId = run.run_id;
  const between = run.running > 0 ? await new TasksRepository(db).betweenAttempts(runId) : [];
  const jobIds = between.map((task) => taskJobId(runId, task.task_id));
  const delayedUntil = await producer.delayedUntil(benchmark.job.queue, jobIds);
  const maxAttempts = benchmark.job.options.attempts ?? 1;
  return between.map((task, index): RetryingTask => {
    const until = delayedUntil.get(jobIds[index] ?? '');
    return {
      taskId: task.task_id,
      failedAttempt: task.failed_attempt,
      error: task.error,
      nextAttempt: task.failed_attempt + 1,
      maxAttempts,
      retryAt: until === undefined ? null : new Date(until).toISOString(),
    };
  });
}

/** The fleet's lanes that the run's calls went through: another run's lanes are not this run's. */
function runLanesOf(
  spend: SpendTotals | undefined,
  snapshot: GovernorSnapshot | undefined,
): readonly LaneSnapshot[] {
  if (!spend || !snapshot) return [];
  const used = new Set(spend.laneIds);
  return snapshot.lanes.filter((lane) => used.has(lane.laneId));
}

function runSpendOf(
  run: RunSummaryRow,
  limits: RunLimits,
  steps: PricedSteps,
  governed: SpendTotals | undefined,
): RunSpend {
  // What was priced decides, not the enqueue's forecast: workers may hold a price the enqueue had
  // not; only a run that has used nothing yet is judged by the forecast.
  const used =
    steps.llmSteps > 0 || (governed?.calls ?? 0) > 0 || run.tokens_in + run.tokens_out > 0;
  const unpricedCalls = Math.max(steps.unpricedSteps, governed?.unpricedCalls ?? 0);
  const unpriced =
    run.cost_usd === null || unpricedCalls > 0 || (!used && limits.model_price === null);
  // The steps' prices, not the governor's live count in Redis: what the run's record says it cost,
  // summed the same way for every benchmark, and not lost with Redis.
  const spentUsd = unpriced ? null : steps.usd;
  const limitUsd = limits.max_cost_usd ?? null;
  const overshootUsd =
    spentUsd !== null && limitUsd !== null ? Math.max(0, spentUsd - limitUsd) : 0;
  const meanCall = governed && governed.calls > 0 ? governed.usd / governed.calls : null;
  return {
    spentUsd,
    llmSteps: steps.llmSteps,
    unpricedCalls,
    projectedUsd: unpriced ? null : run.projected_cost_usd,
    limitUsd,
    taskLimitUsd: limits.max_task_cost_usd ?? null,
    overshootUsd,
    overshootCalls: meanCall && meanCall > 0 ? overshootUsd / meanCall : null,
    unpriced,
  };
}

/** When a retry is due, relative to now: "in 4 min", "in 12 s", "due now". */
function dueIn(retryAt: string, now: number): string {
  const seconds = Math.round((Date.parse(retryAt) - now) / 1000);
  if (seconds <= 0) return 'due now';
  return seconds < 120 ? `in ${seconds} s` : `in ${Math.round(seconds / 60)} min`;
}

/** How many of the retrying tasks `describeStatus` lists one by one. */
const RETRIES_LISTED = 5;

/**
 * One line: progress, counts with the success label, the mean reward where it says more than
 * success; then what is wrong, and the tasks waiting to be retried with when.
 */
export function describeStatus(status: RunStatus, now = Date.now()): string {
  const r = status.run;
  const waiting = status.retrying.length;
  const retries = status.retrying
    .slice(0, RETRIES_LISTED)
    .map(
      (task) =>
        `  ~ ${task.taskId}: attempt ${task.failedAttempt} failed (${task.error ?? 'no error recorded'}); attempt ${task.nextAttempt} of ${task.maxAttempts} ` +
        (task.retryAt === null
          ? 'waits for a worker\n'
          : `at ${task.retryAt} (${dueIn(task.retryAt, now)})\n`),
    );
  if (waiting > RETRIES_LISTED) retries.push(`  ~ and ${waiting - RETRIES_LISTED} more\n`);
  return (
    `${r.run_id} ${r.name} (${r.benchmark}, ${r.run_status}): ${status.done}/${r.total} done, ` +
    `${r.queued} queued, ${r.running - waiting} running, ` +
    (waiting > 0 ? `${waiting} waiting to retry, ` : '') +
    `${r.succeeded} success (${status.successLabel}), ${r.failed} failed, ${r.cancelled} cancelled, ${r.errors} errors` +
    (r.avg_reward !== null && status.rewardIsPartial ? `, mean reward ${r.avg_reward}` : '') +
    (status.etaSeconds !== null ? `, eta ${status.etaSeconds}s` : '') +
    '\n' +
    (status.graded ? `  ${describeGraded(status.graded, status.successLabel)}\n` : '') +
    (status.epochs ? `  ${epochSummaryLine(status.epochs)}\n` : '') +
    describeScores(status.scores) +
    describeSpend(status.spend) +
    status.lanes.map((lane) => `  llm ${describeLane(lane)}\n`).join('') +
    status.notes.map((note) => `  ! ${note}\n`).join('') +
    retries.join('')
  );
}

function percentOf(rate: number | null): string {
  return rate === null ? 'n/a' : `${(rate * 100).toFixed(1)}%`;
}

/** The two scores, when they differ in what they count. */
function describeScores(scores: RunScores): string {
  return (
    `  score: ${percentOf(scores.successRate)} success with infra failures counted as failures, ` +
    `${percentOf(scores.successRateExcludingInfra)} with them excluded ` +
    `(${scores.infraFailed} infra-failed, ${scores.budgetStopped} stopped by a spend limit)\n`
  );
}

/** Spent against the limits, the overshoot, the projection; "unpriced" when a model has no price. */
function describeSpend(spend: RunSpend): string {
  if (spend.unpriced)
    return `  spend: unpriced (the run's model has no price: its cost is unknown, not $0${spend.unpricedCalls > 0 ? `; ${spend.unpricedCalls} unpriced call(s)` : ''})\n`;
  if (spend.spentUsd === null) return '';
  // A run that called no LLM and has no limit: nothing to say.
  if (spend.limitUsd === null && spend.taskLimitUsd === null && !spend.llmSteps && !spend.spentUsd)
    return '';
  const parts = [`spend: ${dollars(spend.spentUsd)} (priced from ${spend.llmSteps} steps)`];
  if (spend.limitUsd !== null) {
    parts.push(`run limit ${dollars(spend.limitUsd)}`);
    if (spend.overshootUsd > 0)
      parts.push(
        `over by ${dollars(spend.overshootUsd)}${spend.overshootCalls !== null ? ` (${spend.overshootCalls.toFixed(1)} calls at the mean call cost; bound: one call per task in flight)` : ''}`,
      );
  }
  if (spend.taskLimitUsd !== null) parts.push(`task limit ${dollars(spend.taskLimitUsd)}`);
  if (spend.projectedUsd !== null) parts.push(`projected ${dollars(spend.projectedUsd)}`);
  return `  ${parts.join(', ')}\n`;
}

/**
 * One LLM lane: rates against limits, 429s, the concurrency target (the key's fingerprint, never
 * the key). No spend: a lane's is every run's on it, and the run's own is said once, above.
 */
function describeLane(lane: LaneSnapshot): string {
  const limit = (value: { configured?: number; learned?: number }) =>
    value.configured !== undefined
      ? `/${value.configured}`
      : value.learned !== undefined
        ? `/${value.learned} (learned)`
        : ' (no limit known)';
  return (
    `${lane.model} at ${lane.provider} key ${lane.keyFingerprint}: ` +
    `${lane.requestsPerMinute}${limit(lane.limits.requestsPerMinute)} req/min, ` +
    `${lane.tokensPerMinute}${limit(lane.limits.tokensPerMinute)} tok/min, ` +
    `${lane.rateLimitedPerMinute} 429/min (${lane.totals.rateLimited} in all), ` +
    `concurrency target ${lane.concurrency.target} (${lane.concurrency.inFlight} in flight)` +
    (lane.heldOffForMs > 0 ? `, held off ${Math.ceil(lane.heldOffForMs / 1000)} s` : '')
  );
}
