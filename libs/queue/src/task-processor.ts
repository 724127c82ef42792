import { UnrecoverableError } from 'bullmq';
import { errorMessage, faultKindOf, redactSecrets, type Logger } from '@benchfleet/core';
import {
  tasksRepository,
  GroupCommit,
  SettleBatcher,
  type Database,
  type OpenAttemptRequest,
  type OpenedAttempt,
  type NewStep,
  type StepWriter,
  type Task,
  type TaskOutcomeRecord,
} from '@benchfleet/db';
import type { TaskPayload } from './job-catalog.js';
import {
  ABORT_REASONS,
  abortReasonOf,
  type JobContext,
  type JobHandler,
} from './worker-runtime.js';

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

/** Microseconds since the epoch, finer than `Date` (steps of a fast episode fall in one millisecond). */
function nowMicros(): number {
  return Math.floor((performance.timeOrigin + performance.now()) * 1000);
}

/** An ISO timestamp with microseconds, as Postgres' timestamptz keeps them. */
function microsToIso(micros: number): string {
  const iso = new Date(Math.floor(micros / 1000)).toISOString();
  return `${iso.slice(0, 23)}${String(micros % 1000).padStart(3, '0')}Z`;
}

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
}

/**
 * Wraps an episode handler with the attempt bookkeeping every task job shares: an `attempts` row
 * per attempt, the outcome of task and attempt in one statement, and the fault taxonomy of
 * `@benchfleet/core` deciding between retrying (transient) and recording once (permanent).
 */
export function createTaskJobHandler(
  deps: TaskProcessorDeps,
  handler: TaskHandler,
): JobHandler<TaskPayload> {
  const tasks = tasksRepository(deps.db);
  // Episodes start and end many at a time: their attempts open, and their outcomes are written, a batch per statement.
  const opener = new GroupCommit<OpenAttemptRequest, OpenedAttempt | undefined>(
    (requests) => tasks.openAttempts(requests),
    {
      key: (request) => `${request.runId}\u0000${request.taskId}`,
    },
  );
  const settler = new SettleBatcher(tasks, deps.steps);
  return async (job) => {
    const { runId, taskId } = job.payload;
    const opened = await opener.submit({
      runId,
      taskId,
      workerId: job.workerId,
      jobAttempt: job.job.attemptsMade + 1,
    });
    if (!opened) {
      job.logger.info(
        { task: taskId },
        'task already has an outcome (or no longer exists): nothing to do',
      );
      return { skipped: true };
    }
    const { attempt } = opened;
    const logger = job.logger.child({ task: taskId, attempt });
    const started = Date.now();
    const settle = async (outcome: TaskOutcomeRecord, final: boolean) => {
      // The outcome and the steps still pending go in one statement, with other episodes' outcomes.
      const result = await settler.settle({ runId, taskId, attempt, outcome, taskFinal: final });
      if (result.recorded) {
        deps.onOutcome?.({
          status: outcome.status,
          totalSteps: outcome.totalSteps,
          tokensIn: outcome.tokensIn ?? 0,
          tokensOut: outcome.tokensOut ?? 0,
        });
      }
      if (result.runSettled) await deps.onRunSettled(runId);
      return result;
    };
    let stepsSeen = 0;
    let lastStepAt = 0;
    const context: TaskContext = {
      job,
      task: opened.task,
      attempt,
      previousExternalId: opened.previousExternalId,
      signal: job.signal,
      logger,
      recordStep(step) {
        stepsSeen = Math.max(stepsSeen, step.step);
        // Stamped now, not when a batch of steps reaches Postgres, to the microsecond and rising.
        lastStepAt = Math.max(nowMicros(), lastStepAt + 1);
        deps.steps.add({
          at: microsToIso(lastStepAt),
          ...step,
          run_id: runId,
          task_id: taskId,
          attempt,
        });
      },
      async setExternalId(externalId) {
        await tasks.setExternalId(runId, taskId, attempt, externalId);
      },
    };

    let outcome: TaskOutcome;
    try {
      outcome = await handler(context);
    } catch (error) {
      const reason = abortReasonOf(job.signal);
      const message = redactSecrets(errorMessage(error));
      const durationMs = Date.now() - started;
      if (reason === ABORT_REASONS.cancelled) {
        await settle(
          { status: 'cancelled', totalSteps: stepsSeen, durationMs, error: 'run cancelled' },
          true,
        );
        return { cancelled: true };
      }
      if (reason === ABORT_REASONS.shutdown) {
        await settle(
          {
            status: 'error',
            errorClass: 'infra',
            totalSteps: stepsSeen,
            durationMs,
            error: 'handed back at worker shutdown',
          },
          false,
        );
        throw error;
      }
      if (error instanceof UnrecoverableError || faultKindOf(error) === 'permanent') {
        await settle(
          {
            status: 'error',
            errorClass: 'permanent',
            totalSteps: stepsSeen,
            durationMs,
            error: message,
          },
          true,
        );
        throw error instanceof UnrecoverableError ? error : new UnrecoverableError(message);
      }
      const lastAttempt = job.job.attemptsMade + 1 >= (job.job.opts.attempts ?? 1);
      const detail = reason === ABORT_REASONS.deadline ? `deadline exceeded: ${message}` : message;
      await settle(
        { status: 'error', errorClass: 'infra', totalSteps: stepsSeen, durationMs, error: detail },
        lastAttempt,
      ).catch((settleError: unknown) =>
        logger.error({ err: settleError }, 'could not record the failed attempt'),
      );
      throw error;
    }
    const errorClass = outcome.status === 'error' ? (outcome.errorClass ?? 'agent') : null;
    const record: TaskOutcomeRecord = {
      ...outcome,
      errorClass,
      durationMs: outcome.durationMs ?? Date.now() - started,
    };
    const { recorded } = await settle(record, true);
    logger.debug({ status: outcome.status, steps: outcome.totalSteps, recorded }, 'task settled');
    return { status: outcome.status, recorded };
  };
}
