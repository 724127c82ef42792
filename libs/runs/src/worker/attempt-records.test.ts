import { afterAll, describe, expect, it } from 'vitest';
import { createLogger } from '@benchfleet/core';
import {
  createDatabase,
  RunsRepository,
  TasksRepository,
  WORKER_LOST_ERROR,
  type Database,
} from '@benchfleet/db';
import { TcpRelay, useTestServices } from '@benchfleet/testing';
import { PendingAttemptRecords } from './attempt-records.js';

const services = useTestServices();
const cleanups: Array<() => Promise<void>> = [];
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
});

async function attemptsOf(runId: string, taskId: string) {
  return services.db
    .selectFrom('attempts')
    .select(['attempt', 'worker_id', 'status', 'error'])
    .where('run_id', '=', runId)
    .where('task_id', '=', taskId)
    .orderBy('attempt')
    .execute();
}

describe('PendingAttemptRecords', () => {
  // Once: when Postgres refused a write (read-only, too many clients, a reset connection) the
  // attempt stayed open and was later closed as "worker lost", though no worker was lost.
  it('keeps what Postgres did not take and writes it when it does, over the presumption of a lost worker', async () => {
    await new RunsRepository(services.db).createWithTasks({
      run: { id: 'run-kept', name: 'kept', benchmark: 'echo', config: '{}', code_version: 't' },
      tasks: ['handed', 'done'].map((task_id, seq) => ({
        task_id,
        seq,
        domain: 'd',
        instruction: 'i',
        spec: '{}',
      })),
    });
    const target = new URL(services.databaseUrl);
    const relay = await TcpRelay.open(target.hostname, Number(target.port || 5432));
    const cutDb: Database = createDatabase(relay.rewrite(services.databaseUrl), {
      max: 2,
      connectTimeoutMs: 1_000,
    });
    cleanups.push(async () => {
      await cutDb.destroy();
      await relay.close();
    });
    const cut = new TasksRepository(cutDb);
    const settled: string[] = [];
    const sut = new PendingAttemptRecords(
      cut,
      createLogger({ level: 'silent' }),
      async (runId) => void settled.push(runId),
      60_000,
    );
    cleanups.push(async () => sut.close());
    await cut.openAttempt('run-kept', 'handed', 'cut', 1);
    await cut.openAttempt('run-kept', 'done', 'cut', 1);

    // Postgres goes away for this worker: what it tries to write is kept.
    await relay.cut();
    const cause = 'handed back: Postgres at postgres://db does not answer (no answer within 5 s)';
    sut.keep(
      {
        runId: 'run-kept',
        taskId: 'handed',
        attempt: 1,
        taskFinal: false,
        outcome: {
          status: 'error',
          errorClass: 'infra',
          totalSteps: 2,
          durationMs: 10,
          error: cause,
        },
      },
      cause,
      new Error('connect ECONNREFUSED'),
    );
    sut.keep(
      {
        runId: 'run-kept',
        taskId: 'done',
        attempt: 1,
        taskFinal: true,
        outcome: { status: 'success', totalSteps: 3, durationMs: 10, reward: 1, success: true },
      },
      'its outcome (success) could not be written before the task ran again: connect ECONNREFUSED',
      new Error('connect ECONNREFUSED'),
    );
    expect(await sut.flush()).toBe(2);
    // Meanwhile another worker takes the handed-back task and presumes this one lost.
    await new TasksRepository(services.db).openAttempt('run-kept', 'handed', 'other', 1);
    expect((await attemptsOf('run-kept', 'handed'))[0]?.error).toBe(WORKER_LOST_ERROR);

    await relay.open();
    expect(await sut.flush()).toBe(0);
    expect(await attemptsOf('run-kept', 'handed')).toEqual([
      { attempt: 1, worker_id: 'cut', status: 'error', error: cause },
      { attempt: 2, worker_id: 'other', status: 'running', error: null },
    ]);
    expect(await attemptsOf('run-kept', 'done')).toEqual([
      { attempt: 1, worker_id: 'cut', status: 'success', error: null },
    ]);
    expect((await new TasksRepository(services.db).get('run-kept', 'done'))?.status).toBe(
      'success',
    );
  });
});
