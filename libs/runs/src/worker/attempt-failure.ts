import { UnrecoverableError } from 'bullmq';
import {
  BadTaskDataError,
  errorMessage,
  faultKindOf,
  redactSecrets,
  SpendLimitReachedError,
  type Logger,
} from '@benchfleet/core';
import type { AttemptUsage, TaskOutcomeRecord } from '@benchfleet/db';
import { ABORT_REASONS, abortReasonOf, outageOf, ServiceOutageError } from '@benchfleet/queue';

/** What is known of an attempt whose episode threw, besides the error. */
export interface FailedAttempt {
  runId: string;
  taskId: string;
  signal: AbortSignal;
  /** Steps the attempt recorded. */
  totalSteps: number;
  durationMs: number;
  spent: AttemptUsage;
  /** This is the job's last try (BullMQ will not run it again on a normal error). */
  lastTry: boolean;
  /** Whether a service the worker needs is down now, given the error (the job's `outage`). */
  outage(error: unknown): Promise<string | null>;
  logger: Logger;
}

/**
 * How a failed attempt ends: the outcome to record (`final`: the task's too), what the handler then
 * does (return a value, or throw for BullMQ: retry, or not for an `UnrecoverableError`), and the
 * run-level check that follows (the run's spend limit, or its infra-error budget).
 */
export interface AttemptFailure {
  outcome: TaskOutcomeRecord;
  final: boolean;
  then: { return: unknown } | { throw: unknown };
  runCheck?: { spendLimit: string } | 'infraBudget';
}

/**
 * The fault taxonomy, decided in one place: a cancelled run, a hand-back (shutdown or outage), a
 * spend limit, the task's own bad data, a permanent fault, a service found down, or else a
 * transient (infra) fault that BullMQ retries.
 */
export async function attemptFailure(
  error: unknown,
  failed: FailedAttempt,
): Promise<AttemptFailure> {
  const reason = abortReasonOf(failed.signal);
  const message = redactSecrets(errorMessage(error));
  const infra = (detail: string): TaskOutcomeRecord => ({
    status: 'error',
    errorClass: 'infra',
    totalSteps: failed.totalSteps,
    durationMs: failed.durationMs,
    ...failed.spent,
    error: detail,
  });
  if (reason === ABORT_REASONS.cancelled) return cancelledByRun(failed);
  if (reason === ABORT_REASONS.shutdown)
    return {
      outcome: infra('handed back at worker shutdown'),
      final: false,
      then: { throw: error },
    };
  // The worker handed its jobs back: a service it needs has been down for too long.
  if (reason === ABORT_REASONS.outage) {
    const detail = `handed back: ${outageOf(failed.signal)}`;
    return { outcome: infra(detail), final: false, then: { throw: error } };
  }
  if (error instanceof SpendLimitReachedError) return stoppedByBudget(error, message, failed);
  if (error instanceof BadTaskDataError) return badTaskData(error, failed);
  if (error instanceof UnrecoverableError || faultKindOf(error) === 'permanent') {
    const outcome = permanent(failed, message);
    const thrown = error instanceof UnrecoverableError ? error : new UnrecoverableError(message);
    return { outcome, final: true, then: { throw: thrown } };
  }
  // A failure while a service the worker needs is down is the outage's, not the task's: the
  // job goes back to the queue without using up an attempt, and the attempt says why.
  const outage = await failed.outage(error);
  if (outage) {
    // The attempt's own message too, unless it only repeats the outage: it may say more (a
    // desktop found dead after step 4, from the agent's failed actions and a probe).
    const failedWith =
      message === outage || message === `handed back: ${outage}`
        ? ''
        : ` (the attempt failed with: ${message})`;
    const outcome = infra(`handed back: ${outage}${failedWith}`);
    return { outcome, final: false, then: { throw: new ServiceOutageError(outage) } };
  }
  const detail = reason === ABORT_REASONS.deadline ? `deadline exceeded: ${message}` : message;
  return {
    outcome: infra(detail),
    final: failed.lastTry,
    then: { throw: error },
    runCheck: 'infraBudget',
  };
}

function cancelledByRun(failed: FailedAttempt): AttemptFailure {
  const outcome: TaskOutcomeRecord = {
    status: 'cancelled',
    totalSteps: failed.totalSteps,
    durationMs: failed.durationMs,
    ...failed.spent,
    error: 'run cancelled',
  };
  return { outcome, final: true, then: { return: { cancelled: true } } };
}

/** A spend limit stopped the task: its own outcome, neither the agent's nor a fault. */
function stoppedByBudget(
  error: SpendLimitReachedError,
  message: string,
  failed: FailedAttempt,
): AttemptFailure {
  const outcome: TaskOutcomeRecord = {
    status: 'error',
    errorClass: 'budget',
    finalApiStatus: 'BUDGET',
    totalSteps: failed.totalSteps,
    durationMs: failed.durationMs,
    ...failed.spent,
    costUsd: error.attemptSpentUsd,
    error: `budget: ${message}`,
    result: { stop_reason: 'budget', budget_scope: error.scope, limit_usd: error.limitUsd },
  };
  return {
    outcome,
    final: true,
    then: { return: { budget: error.scope } },
    ...(error.scope === 'run' && { runCheck: { spendLimit: message } }),
  };
}

/** A task whose own data breaks its episode: once, named, with the task (never retried). */
function badTaskData(error: BadTaskDataError, failed: FailedAttempt): AttemptFailure {
  const detail = redactSecrets(
    `bad task data: task ${failed.taskId} of run ${failed.runId} (${error.data}): ${error.problem}`,
  );
  failed.logger.warn({ run: failed.runId }, detail);
  const outcome = { ...permanent(failed, detail), finalApiStatus: 'BAD_TASK_DATA' };
  return { outcome, final: true, then: { throw: new UnrecoverableError(detail) } };
}

function permanent(failed: FailedAttempt, error: string): TaskOutcomeRecord {
  return {
    status: 'error',
    errorClass: 'permanent',
    totalSteps: failed.totalSteps,
    durationMs: failed.durationMs,
    ...failed.spent,
    error,
  };
}
