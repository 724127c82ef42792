import { describe, expect, it } from 'vitest';
import { useTestServices } from '@benchfleet/testing';
import type { SettledTaskStatus } from '@benchfleet/core';
import { createDatabase } from './database.js';
import { RunsRepository } from './runs-repository.js';
import { SettleBatcher, type SettleBatcherTasks } from './settle-batcher.js';
import { StepWriter, StepsRepository } from './steps-repository.js';
import { TasksRepository, type SettleRequest } from './tasks-repository.js';

const services = useTestServices();

/** Opens the first attempt of `count` tasks of a new run. */
async function openRun(runId: string, count: number): Promise<string[]> {
  const taskIds = Array.from({ length: count }, (_, i) => `t${i}`);
  await new RunsRepository(services.db).createWithTasks({
    run: {
      id: runId,
      name: runId,
      benchmark: 'echo',
      config: JSON.stringify({}),
      code_version: 'test',
    },
    tasks: taskIds.map((task_id, seq) => ({
      task_id,
      seq,
      domain: 'd',
      instruction: 'i',
      spec: JSON.stringify({}),
    })),
  });
  const tasks = new TasksRepository(services.db);
  for (const taskId of taskIds) await tasks.openAttempt(runId, taskId, 'w', 1);
  return taskIds;
}

/** The real repository, counting the statements its batched settle sends and how many outcomes each carries. */
function countingTasks(db = services.db): { tasks: SettleBatcherTasks; batches: number[] } {
  const real = new TasksRepository(db);
  const batches: number[] = [];
  return {
    batches,
    tasks: {
      runHasNoOpenTask: (runId) => real.runHasNoOpenTask(runId),
      settleMany: (settles, steps) => {
        batches.push(settles.length);
        return real.settleMany(settles, steps);
      },
    },
  };
}

const request = (
  runId: string,
  taskId: string,
  status: SettledTaskStatus,
  extra: Partial<SettleRequest['outcome']> = {},
): SettleRequest => ({
  runId,
  taskId,
  attempt: 1,
  taskFinal: true,
  outcome: { status, totalSteps: 2, durationMs: 40, ...extra },
});

describe('SettleBatcher', () => {
  it('writes outcomes that arrive together in one statement each batch, every field on its own task, and says the run settled after the last one', async () => {
    const taskIds = await openRun('group', 30);
    const { tasks, batches } = countingTasks();
    const sut = new SettleBatcher(tasks, new StepWriter(new StepsRepository(services.db)), 8);
    const results = await Promise.all(
      taskIds.map((taskId, i) =>
        sut.settle(
          request('group', taskId, i % 3 === 0 ? 'failed' : 'success', {
            reward: i / 100,
            tokensIn: i,
            result: { goal: i },
            costUsd: i % 2 ? null : 0.5,
          }),
        ),
      ),
    );
    // Thirty outcomes, eight a statement at most: four statements, not thirty.
    expect(batches).toEqual([8, 8, 8, 6]);
    expect(results.every((result) => result.recorded)).toBe(true);
    // The last batch's question is asked after the last commit, for its first outcome only: the
    // run is summarised once, not once per outcome of that batch.
    expect(results.slice(24).map((result) => result.runSettled)).toEqual([
      true,
      false,
      false,
      false,
      false,
      false,
    ]);
    const rows = await services.db
      .selectFrom('tasks')
      .select([
        'task_id',
        'status',
        'reward',
        'tokens_in',
        'result',
        'cost_usd',
        'duration_ms',
        'success',
      ])
      .where('run_id', '=', 'group')
      .orderBy('seq')
      .execute();
    rows.forEach((row, i) => {
      expect(row).toEqual({
        task_id: `t${i}`,
        status: i % 3 === 0 ? 'failed' : 'success',
        reward: i / 100,
        tokens_in: i,
        result: { goal: i },
        cost_usd: i % 2 ? null : 0.5,
        duration_ms: 40,
        success: i % 3 !== 0,
      });
    });
    const attempts = await services.db
      .selectFrom('attempts')
      .select('status')
      .where('run_id', '=', 'group')
      .where('status', '=', 'running')
      .execute();
    expect(attempts).toEqual([]);
  });

  it('writes the steps still pending with the batch, and records one outcome when the same attempt is settled twice at once', async () => {
    const [first] = await openRun('twice', 2);
    const steps = new StepWriter(new StepsRepository(services.db), { maxDelayMs: 60_000 });
    steps.add({ run_id: 'twice', task_id: first!, attempt: 1, step: 1, observation: 'seen' });
    const { tasks, batches } = countingTasks();
    const sut = new SettleBatcher(tasks, steps);
    const [a, b] = await Promise.all([
      sut.settle(request('twice', first!, 'success')),
      sut.settle(request('twice', first!, 'failed')),
    ]);
    expect([a?.recorded, b?.recorded]).toEqual([true, false]);
    expect(batches).toEqual([1, 1]);
    expect((await new TasksRepository(services.db).get('twice', first!))?.status).toBe('success');
    const written = await services.db
      .selectFrom('steps')
      .select(['task_id', 'observation'])
      .where('run_id', '=', 'twice')
      .execute();
    expect(written).toEqual([{ task_id: first, observation: 'seen' }]);
  });

  it('gives an outcome Postgres refuses its own error and records the rest of its batch', async () => {
    const taskIds = await openRun('refused', 4);
    const { tasks, batches } = countingTasks();
    const sut = new SettleBatcher(tasks, new StepWriter(new StepsRepository(services.db)));
    const settled = taskIds.map((taskId, i) =>
      sut.settle(request('refused', taskId, i === 2 ? ('bogus' as SettledTaskStatus) : 'success')),
    );
    const results = await Promise.allSettled(settled);
    expect(results.map((result) => result.status)).toEqual([
      'fulfilled',
      'fulfilled',
      'rejected',
      'fulfilled',
    ]);
    expect(String((results[2] as PromiseRejectedResult).reason)).toMatch(/check constraint/);
    // The batch of four was refused; each was then written alone.
    expect(batches).toEqual([4, 1, 1, 1, 1]);
    const statuses = await services.db
      .selectFrom('tasks')
      .select('status')
      .where('run_id', '=', 'refused')
      .orderBy('seq')
      .execute();
    expect(statuses.map((row) => row.status)).toEqual(['success', 'success', 'running', 'success']);
  });

  it('does not record an outcome for an attempt that is no longer the task’s current one', async () => {
    const [taskId] = await openRun('stale', 1);
    await new TasksRepository(services.db).openAttempt('stale', taskId!, 'w2', 2);
    const sut = new SettleBatcher(
      new TasksRepository(services.db),
      new StepWriter(new StepsRepository(services.db)),
    );
    expect(await sut.settle(request('stale', taskId!, 'success'))).toEqual({
      recorded: false,
      runSettled: false,
    });
    expect(await sut.settle({ ...request('stale', taskId!, 'failed'), attempt: 2 })).toEqual({
      recorded: true,
      runSettled: true,
    });
  });

  it('gives every outcome of a batch the error at once when Postgres cannot be reached, without trying them one by one', async () => {
    const unreachable = createDatabase('postgres://postgres@127.0.0.1:1/none', {
      connectTimeoutMs: 1_000,
    });
    try {
      const { tasks, batches } = countingTasks(unreachable);
      const sut = new SettleBatcher(tasks, new StepWriter(new StepsRepository(unreachable)));
      const results = await Promise.allSettled(
        ['a', 'b', 'c'].map((taskId) => sut.settle(request('nowhere', taskId, 'success'))),
      );
      expect(results.map((result) => result.status)).toEqual(['rejected', 'rejected', 'rejected']);
      expect(batches).toEqual([3]);
    } finally {
      await unreachable.destroy();
    }
  });
});
