import { UnrecoverableError } from 'bullmq';
import { describe, expect, it } from 'vitest';
import {
  BadTaskDataError,
  createLogger,
  PermanentError,
  SpendLimitReachedError,
} from '@benchfleet/core';
import { ABORT_REASONS, ServiceOutageError } from '@benchfleet/queue';
import { attemptFailure as sut, type FailedAttempt } from './attempt-failure.js';

const spent = { tokensIn: 10, tokensOut: 5, costUsd: 0.25 };

function failed(overrides: Partial<FailedAttempt> = {}): FailedAttempt {
  return {
    runId: 'run-1',
    taskId: 'task-1',
    signal: new AbortController().signal,
    totalSteps: 3,
    durationMs: 1_200,
    spent,
    lastTry: false,
    outage: async () => null,
    logger: createLogger({ level: 'silent' }),
    ...overrides,
  };
}

function abortedWith(reason: unknown): AbortSignal {
  const controller = new AbortController();
  controller.abort(reason);
  return controller.signal;
}

describe('attemptFailure (the fault taxonomy of a failed attempt)', () => {
  it('ends the task as cancelled when its run was cancelled, and returns', async () => {
    const failure = await sut(
      new Error('aborted'),
      failed({ signal: abortedWith(ABORT_REASONS.cancelled) }),
    );
    expect(failure).toEqual({
      outcome: {
        status: 'cancelled',
        totalSteps: 3,
        durationMs: 1_200,
        ...spent,
        error: 'run cancelled',
      },
      final: true,
      then: { return: { cancelled: true } },
    });
  });

  it('hands the job back at shutdown and at an outage: an infra attempt, not the task, and the error thrown again', async () => {
    const error = new Error('aborted');
    const atShutdown = await sut(error, failed({ signal: abortedWith(ABORT_REASONS.shutdown) }));
    expect(atShutdown).toMatchObject({
      outcome: { status: 'error', errorClass: 'infra', error: 'handed back at worker shutdown' },
      final: false,
      then: { throw: error },
    });
    const outage = new ServiceOutageError('postgres at 10.0.0.5:5432: connect ECONNREFUSED');
    const atOutage = await sut(error, failed({ signal: abortedWith(outage) }));
    expect(atOutage.outcome.error).toBe(
      'handed back: postgres at 10.0.0.5:5432: connect ECONNREFUSED',
    );
    expect(atOutage.final).toBe(false);
  });

  it("ends a task stopped by a spend limit with `budget`, its spend the limit's, and fences the run only at a run limit", async () => {
    const runLimit = new SpendLimitReachedError('run', 2, 0.4, 'run spent $2.00 of $2.00');
    const failure = await sut(runLimit, failed());
    expect(failure).toMatchObject({
      outcome: {
        status: 'error',
        errorClass: 'budget',
        finalApiStatus: 'BUDGET',
        costUsd: 0.4,
        error: 'budget: run spent $2.00 of $2.00',
        result: { stop_reason: 'budget', budget_scope: 'run', limit_usd: 2 },
      },
      final: true,
      then: { return: { budget: 'run' } },
      runCheck: { spendLimit: 'run spent $2.00 of $2.00' },
    });
    const taskLimit = new SpendLimitReachedError('task', 1, 1, 'task spent $1.00 of $1.00');
    expect((await sut(taskLimit, failed())).runCheck).toBeUndefined();
  });

  it('records bad task data once, naming the task, and never retries it', async () => {
    const failure = await sut(new BadTaskDataError('goal 12', 'no such product'), failed());
    expect(failure.outcome).toMatchObject({
      status: 'error',
      errorClass: 'permanent',
      finalApiStatus: 'BAD_TASK_DATA',
      error: 'bad task data: task task-1 of run run-1 (goal 12): no such product',
    });
    expect(failure.final).toBe(true);
    expect('throw' in failure.then && failure.then.throw).toBeInstanceOf(UnrecoverableError);
  });

  it('records a permanent fault as the task outcome and makes it unrecoverable for BullMQ', async () => {
    const failure = await sut(new PermanentError('the model does not exist'), failed());
    expect(failure.outcome).toMatchObject({
      errorClass: 'permanent',
      error: 'the model does not exist',
    });
    expect(failure.final).toBe(true);
    const thrown = 'throw' in failure.then ? failure.then.throw : undefined;
    expect(thrown).toBeInstanceOf(UnrecoverableError);
    expect((thrown as Error).message).toBe('the model does not exist');
  });

  it("blames a service found down for a transient failure: handed back with the attempt's own message", async () => {
    const failure = await sut(
      new Error('step 4: click failed'),
      failed({ outage: async () => 'bytebot at 127.0.0.1:9990: unreachable' }),
    );
    expect(failure.outcome.error).toBe(
      'handed back: bytebot at 127.0.0.1:9990: unreachable (the attempt failed with: step 4: click failed)',
    );
    expect(failure.final).toBe(false);
    expect('throw' in failure.then && failure.then.throw).toBeInstanceOf(ServiceOutageError);
    expect(failure.runCheck).toBeUndefined();
    const repeated = await sut(
      new Error('bytebot at 127.0.0.1:9990: unreachable'),
      failed({ outage: async () => 'bytebot at 127.0.0.1:9990: unreachable' }),
    );
    expect(repeated.outcome.error).toBe('handed back: bytebot at 127.0.0.1:9990: unreachable');
  });

  it("retries any other fault as infra, the task's outcome only on its last try, and checks the run's infra-error budget", async () => {
    const error = new Error('socket hang up');
    const first = await sut(error, failed());
    expect(first).toMatchObject({
      outcome: {
        status: 'error',
        errorClass: 'infra',
        error: 'socket hang up',
        totalSteps: 3,
        ...spent,
      },
      final: false,
      then: { throw: error },
      runCheck: 'infraBudget',
    });
    expect((await sut(error, failed({ lastTry: true }))).final).toBe(true);
    const late = await sut(error, failed({ signal: abortedWith(new Error('deadline')) }));
    expect(late.outcome.error).toBe('deadline exceeded: socket hang up');
  });
});
