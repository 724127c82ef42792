import { describe, expect, it } from 'vitest';
import { useTestServices, waitFor } from '@benchfleet/testing';
import { createDatabase } from './database.js';
import type { NewStep } from './schema.js';
import { StepWriter, StepsRepository, type StepSink } from './steps-repository.js';
import { TasksRepository } from './tasks-repository.js';

const services = useTestServices();

/** The real repository, counting the INSERTs it is asked for. */
function countingRepository(): { repository: StepSink; inserts: number[] } {
  const real = new StepsRepository(services.db);
  const inserts: number[] = [];
  return {
    inserts,
    repository: {
      ...real,
      insertMany: async (steps) => {
        inserts.push(steps.length);
        await real.insertMany(steps);
      },
    },
  };
}

async function openAttempts(runId: string, tasks: number): Promise<void> {
  await services.db
    .insertInto('runs')
    .values({ id: runId, name: runId, benchmark: 'webshop', config: '{}', code_version: 'test' })
    .execute();
  const taskIds = Array.from({ length: tasks }, (_, i) => `t${i}`);
  await services.db
    .insertInto('tasks')
    .values(
      taskIds.map((taskId, seq) => ({
        run_id: runId,
        task_id: taskId,
        seq,
        domain: 'd',
        instruction: 'i',
        spec: '{}',
      })),
    )
    .execute();
  await services.db
    .insertInto('attempts')
    .values(
      taskIds.map((taskId) => ({
        run_id: runId,
        task_id: taskId,
        attempt: 1,
        job_attempt: 1,
        worker_id: 'w',
        status: 'running' as const,
      })),
    )
    .execute();
}

const stepOf = (runId: string, task: number, step: number): NewStep => ({
  run_id: runId,
  task_id: `t${task}`,
  attempt: 1,
  step,
  observation: `obs ${task}.${step}`,
});

describe('StepWriter', () => {
  it('writes at once on flush, taking along every step pending from other episodes; each flush resolves with its steps written', async () => {
    await openAttempts('together', 20);
    const { repository, inserts } = countingRepository();
    const sut = new StepWriter(repository, { maxDelayMs: 1_000 });
    // Ten episodes take steps; then twenty finish: each flush writes what is pending at that moment.
    for (let task = 0; task < 10; task++) sut.add(stepOf('together', task, 1));
    const flushes = Array.from({ length: 20 }, async (_, task) => {
      for (let step = task < 10 ? 2 : 1; step <= 3; step++) sut.add(stepOf('together', task, step));
      await sut.flush();
      const written = await services.db
        .selectFrom('steps')
        .select('step')
        .where('run_id', '=', 'together')
        .where('task_id', '=', `t${task}`)
        .execute();
      expect(written.map((row) => row.step).sort()).toEqual([1, 2, 3]);
    });
    await Promise.all(flushes);
    expect(inserts).toEqual([12, ...Array.from({ length: 19 }, (_, i) => (i < 9 ? 2 : 3))]);
  });

  it('keeps steps whose write failed (Postgres unreachable) and writes them with the next flush', async () => {
    await openAttempts('late', 1);
    const unreachable = createDatabase('postgres://postgres@127.0.0.1:1/none', {
      connectTimeoutMs: 1_000,
    });
    const { repository: reachable, inserts } = countingRepository();
    let target: StepSink = new StepsRepository(unreachable);
    const sut = new StepWriter({ ...reachable, insertMany: (steps) => target.insertMany(steps) });
    sut.add(stepOf('late', 0, 1));
    await expect(sut.flush()).rejects.toThrow();
    await unreachable.destroy();
    target = reachable;
    sut.add(stepOf('late', 0, 2));
    await sut.flush();
    const written = await services.db
      .selectFrom('steps')
      .select('step')
      .where('run_id', '=', 'late')
      .orderBy('step')
      .execute();
    expect(written.map((row) => row.step)).toEqual([1, 2]);
    expect(inserts).toEqual([2]);
  });

  it('writes on its own once a batch is full or the delay has passed', async () => {
    await openAttempts('unasked', 2);
    const { repository, inserts } = countingRepository();
    const sut = new StepWriter(repository, { maxBatch: 3, maxDelayMs: 30 });
    for (let step = 1; step <= 4; step++) sut.add(stepOf('unasked', 0, step));
    await waitFor('all four steps in Postgres', async () => {
      const written = await services.db
        .selectFrom('steps')
        .select('step')
        .where('run_id', '=', 'unasked')
        .execute();
      return written.length === 4;
    });
    expect(inserts).toEqual([3, 1]);
  });

  it('writes a task outcome and every pending step in one statement, after the writes under way, and never before a failed one', async () => {
    await openAttempts('settled', 3);
    await services.db
      .updateTable('tasks')
      .set({ attempts: 1, status: 'running' })
      .where('run_id', '=', 'settled')
      .execute();
    const { repository, inserts } = countingRepository();
    let failNext = true;
    const sut = new StepWriter(
      {
        ...repository,
        insertMany: async (steps) =>
          failNext
            ? ((failNext = false), Promise.reject(new Error('no Postgres')))
            : repository.insertMany(steps),
      },
      { maxBatch: 2, maxDelayMs: 1_000 },
    );
    const tasks = new TasksRepository(services.db);
    // A full batch starts a write that fails; the settle behind it must not run (its steps might be in that batch).
    sut.add(stepOf('settled', 0, 1));
    sut.add(stepOf('settled', 1, 1));
    sut.add(stepOf('settled', 0, 2));
    let settles = 0;
    const settleTask0 = (steps: readonly NewStep[]) => {
      settles += 1;
      return tasks.settle(
        'settled',
        't0',
        1,
        { status: 'success', totalSteps: 2, durationMs: 5 },
        true,
        steps,
      );
    };
    await expect(sut.flushWith(settleTask0)).rejects.toThrow('no Postgres');
    expect(settles).toBe(0);
    // Next time every pending step (task 1's too) goes with the outcome: no INSERT of their own.
    await expect(sut.flushWith(settleTask0)).resolves.toEqual({
      recorded: true,
      runSettled: false,
    });
    expect(inserts).toEqual([]);
    const written = await services.db
      .selectFrom('steps')
      .select(['task_id', 'step'])
      .where('run_id', '=', 'settled')
      .orderBy('task_id')
      .orderBy('step')
      .execute();
    expect(written).toEqual([
      { task_id: 't0', step: 1 },
      { task_id: 't0', step: 2 },
      { task_id: 't1', step: 1 },
    ]);
    // The fence holds inside the statement too: steps of a settled attempt are not written.
    sut.add(stepOf('settled', 0, 3));
    await sut.flushWith((steps) =>
      tasks.settle(
        'settled',
        't2',
        1,
        { status: 'failed', totalSteps: 0, durationMs: 5 },
        true,
        steps,
      ),
    );
    expect(
      await services.db
        .selectFrom('steps')
        .select('step')
        .where('run_id', '=', 'settled')
        .where('task_id', '=', 't0')
        .execute(),
    ).toHaveLength(2);
  });
});
