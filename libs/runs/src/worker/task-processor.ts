import { createLogger, type Logger } from '@benchfleet/core';
import {
  RunsRepository,
  TasksRepository,
  SettleBatcher,
  type Database,
  type OpenedAttempt,
  type StepWriter,
  type TaskOutcomeRecord,
} from '@benchfleet/db';
import type { JobContext, JobHandler, TaskPayload } from '@benchfleet/queue';
import type { TaskHandler, TaskOutcome } from '@benchfleet/benchmark-kit';
import { processTelemetry } from '@benchfleet/telemetry';
import { PendingAttemptRecords } from './attempt-records.js';
import type { OutcomeLedger } from '../outcome-ledger.js';
import type { ActionSummarizer } from './step-span-attributes.js';
import { AttemptOpening } from './attempt-opening.js';
import { AttemptContext } from './attempt-context.js';
import { attemptFailure } from './attempt-failure.js';
import { AttemptSettlement, type SettlementResources } from './attempt-settlement.js';
import { RunBudgetFence } from './run-budget-fence.js';

// One task job, from job to row, in named steps: the attempt opens (attempt-opening), the episode
// runs in its context (attempt-context: steps, spend), and the attempt settles — the episode's own
// outcome, or a failure the fault taxonomy names (attempt-failure) — through attempt-settlement,
// with the run's budgets checked after (run-budget-fence). This file puts them together.

export interface TaskProcessorDeps {
  db: Database;
  steps: StepWriter;
  /** Called once, by the settler that saw the run's last task settle. */
  onRunSettled(runId: string): Promise<void>;
  onOutcome?(outcome: {
    status: string;
    totalSteps: number;
    tokensIn: number;
    tokensOut: number;
  }): void;
  /** Where outcomes Postgres did not take wait to be written (one per process; made here if not given). */
  records?: PendingAttemptRecords;
  /**
   * Where committed final outcomes are kept for a while, so that one a failover loses is restored
   * instead of run again (none: not kept).
   */
  ledger?: OutcomeLedger;
  logger?: Logger;
}

/** The benchmark's name and step reading, on the attempt's spans. */
interface SpanNaming {
  /** Default: the job's queue. */
  benchmark: string | undefined;
  summarizeAction: ActionSummarizer | undefined;
}

/**
 * Wraps an episode handler with the attempt bookkeeping every task job shares: an `attempts` row
 * per attempt, the outcome of task and attempt in one statement, and the fault taxonomy of
 * `@benchfleet/core` deciding between retrying (transient) and recording once (permanent). With
 * tracing on, each attempt is a `benchfleet.task.attempt` span (the episode's LLM calls its
 * children) and each recorded step a `benchfleet.step` span under it.
 */
export function createTaskJobHandler(
  deps: TaskProcessorDeps,
  handler: TaskHandler,
  /** The benchmark's name, on the attempt's span; default: the job's queue. */
  benchmark?: string,
  /** How the benchmark's actions read on its step spans (its descriptor's `summarizeAction`). */
  summarizeAction?: ActionSummarizer,
): JobHandler<TaskPayload> {
  const tasks = new TasksRepository(deps.db);
  const runs = new RunsRepository(deps.db);
  const logger = deps.logger ?? createLogger({ level: 'warn' });
  const fence = new RunBudgetFence(runs, tasks, deps.onRunSettled);
  const opening = new AttemptOpening(tasks, runs, fence, deps.onRunSettled, deps.ledger, logger);
  const resources: SettlementResources = {
    tasks,
    // Episodes end many at a time: their outcomes are written a batch per statement.
    settler: new SettleBatcher(tasks, deps.steps),
    records: deps.records ?? new PendingAttemptRecords(tasks, logger, deps.onRunSettled),
    ledger: deps.ledger,
    onRunSettled: deps.onRunSettled,
    onOutcome: deps.onOutcome?.bind(deps),
  };
  const shared: AttemptResources = { tasks, steps: deps.steps, handler, fence, resources };
  return async (job) => {
    const start = await opening.open(job);
    if ('skipped' in start) return start.skipped;
    return runAttempt(shared, job, start.opened, { benchmark, summarizeAction });
  };
}

/** What one attempt's run uses, shared by every attempt of the handler. */
interface AttemptResources {
  tasks: TasksRepository;
  steps: StepWriter;
  handler: TaskHandler;
  fence: RunBudgetFence;
  resources: SettlementResources;
}

/** An opened attempt, in its span: the episode runs, then its outcome or its failure settles. */
async function runAttempt(
  { tasks, steps, handler, fence, resources }: AttemptResources,
  job: JobContext<TaskPayload>,
  opened: OpenedAttempt,
  naming: SpanNaming,
): Promise<unknown> {
  const { runId, taskId } = job.payload;
  const { attempt } = opened;
  const telemetry = processTelemetry();
  const start = {
    runId,
    taskId,
    attempt,
    benchmark: naming.benchmark ?? job.job.queueName,
    domain: opened.task.domain,
    workerId: job.workerId,
    ...(job.payload.traceparent !== undefined && { enqueuedBy: job.payload.traceparent }),
  };
  return telemetry.attemptSpan(start, async (span) => {
    const logger = job.logger.child({ task: taskId, attempt });
    const writes = {
      steps,
      tasks,
      span,
      tracing: telemetry.enabled,
      summarizeAction: naming.summarizeAction,
    };
    const context = new AttemptContext(job, opened, logger, writes, Date.now());
    const settlement = new AttemptSettlement(resources, job, attempt, span, logger);
    let outcome: TaskOutcome;
    try {
      outcome = await handler(context.forEpisode());
    } catch (error) {
      return settleFailure(error, { job, context, settlement, fence, logger });
    }
    const errorClass = outcome.status === 'error' ? (outcome.errorClass ?? 'agent') : null;
    const durationMs = outcome.durationMs ?? Date.now() - context.started;
    const record: TaskOutcomeRecord = { ...outcome, errorClass, durationMs };
    const recorded = await settlement.settleReturned(record);
    logger.debug({ status: outcome.status, steps: outcome.totalSteps, recorded }, 'task settled');
    return { status: outcome.status, recorded };
  });
}

/** The episode threw: the failure named, its outcome settled, the run's budgets checked. */
async function settleFailure(
  error: unknown,
  attempt: {
    job: JobContext<TaskPayload>;
    context: AttemptContext;
    settlement: AttemptSettlement;
    fence: RunBudgetFence;
    logger: Logger;
  },
): Promise<unknown> {
  const { job, context, settlement, fence, logger } = attempt;
  const { runId, taskId } = job.payload;
  const failure = await attemptFailure(error, {
    runId,
    taskId,
    signal: job.signal,
    totalSteps: context.totalSteps,
    durationMs: Date.now() - context.started,
    spent: context.spend.soFar(),
    lastTry: job.job.attemptsMade + 1 >= (job.job.opts.attempts ?? 1),
    outage: (cause) => job.outage(cause),
    logger,
  });
  await settlement.settleOrKeep(failure.outcome, failure.final);
  if (failure.runCheck === 'infraBudget') await fence.checkInfraErrors(runId, logger);
  else if (failure.runCheck) await fence.atSpendLimit(runId, failure.runCheck.spendLimit, logger);
  if ('throw' in failure.then) throw failure.then.throw;
  return failure.then.return;
}
