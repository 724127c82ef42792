import { describe, expect, it } from 'vitest';
import { useTestServices, waitFor } from '@benchfleet/testing';
import { createDatabase } from './database.js';
import type { NewStep } from './schema.js';
import { StepWriter, stepsRepository, type StepsRepository } from './steps-repository.js';

const services = useTestServices();

/** The real repository, counting the INSERTs it is asked for. */
function countingRepository(): { repository: StepsRepository; inserts: number[] } {
  const real = stepsRepository(services.db);
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
    .values(taskIds.map((taskId, seq) => ({ run_id: runId, task_id: taskId, seq, domain: 'd', instruction: 'i', spec: '{}' })))
    .execute();
  await services.db
    .insertInto('attempts')
    .values(taskIds.map((taskId) => ({ run_id: runId, task_id: taskId, attempt: 1, job_attempt: 1, worker_id: 'w', status: 'running' as const })))
    .execute();
}

const stepOf = (runId: string, task: number, step: number): NewStep => ({ run_id: runId, task_id: `t${task}`, attempt: 1, step, observation: `obs ${task}.${step}` });

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
      const written = await services.db.selectFrom('steps').select('step').where('run_id', '=', 'together').where('task_id', '=', `t${task}`).execute();
      expect(written.map((row) => row.step).sort()).toEqual([1, 2, 3]);
    });
    await Promise.all(flushes);
    expect(inserts).toEqual([12, ...Array.from({ length: 19 }, (_, i) => (i < 9 ? 2 : 3))]);
  });

  it('keeps steps whose write failed (Postgres unreachable) and writes them with the next flush', async () => {
    await openAttempts('late', 1);
    const unreachable = createDatabase('postgres://postgres@127.0.0.1:1/none', { connectTimeoutMs: 1_000 });
    const { repository: reachable, inserts } = countingRepository();
    let target = stepsRepository(unreachable);
    const sut = new StepWriter({ ...reachable, insertMany: (steps) => target.insertMany(steps) });
    sut.add(stepOf('late', 0, 1));
    await expect(sut.flush()).rejects.toThrow();
    await unreachable.destroy();
    target = reachable;
    sut.add(stepOf('late', 0, 2));
    await sut.flush();
    const written = await services.db.selectFrom('steps').select('step').where('run_id', '=', 'late').orderBy('step').execute();
    expect(written.map((row) => row.step)).toEqual([1, 2]);
    expect(inserts).toEqual([2]);
  });

  it('writes on its own once a batch is full or the delay has passed', async () => {
    await openAttempts('unasked', 2);
    const { repository, inserts } = countingRepository();
    const sut = new StepWriter(repository, { maxBatch: 3, maxDelayMs: 30 });
    for (let step = 1; step <= 4; step++) sut.add(stepOf('unasked', 0, step));
    await waitFor('all four steps in Postgres', async () => {
      const written = await services.db.selectFrom('steps').select('step').where('run_id', '=', 'unasked').execute();
      return written.length === 4;
    });
    expect(inserts).toEqual([3, 1]);
  });
});
