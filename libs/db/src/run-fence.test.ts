import { describe, expect, it } from 'vitest';
import { useTestServices } from '@benchfleet/testing';
import { RunsRepository } from './runs-repository.js';
import { TasksRepository } from './tasks-repository.js';

// The run-level fence: the statements that stop a run at its spend limit and pause it on infra
// errors, and the attempt opening that reads the fence.

const services = useTestServices();

async function createRun(runId: string, taskIds: string[], limits?: object): Promise<void> {
  await new RunsRepository(services.db).createWithTasks({
    run: {
      id: runId,
      name: runId,
      benchmark: 'echo',
      config: JSON.stringify({}),
      code_version: 'test',
      limits: limits === undefined ? null : JSON.stringify(limits),
    },
    tasks: taskIds.map((task_id, seq) => ({
      task_id,
      seq,
      domain: 'd',
      instruction: 'i',
      spec: JSON.stringify({}),
    })),
  });
}

describe('RunsRepository.haltForBudget', () => {
  it('ends the queued tasks and those between attempts with budget, leaves a running attempt to its worker, and no attempt opens after it', async () => {
    const runs = new RunsRepository(services.db);
    const tasks = new TasksRepository(services.db);
    await createRun('run-b', ['queued', 'between', 'running', 'done']);
    const between = await tasks.openAttempt('run-b', 'between', 'w', 1);
    await tasks.settle(
      'run-b',
      'between',
      between!.attempt,
      { status: 'error', errorClass: 'infra', totalSteps: 1, durationMs: 1, error: 'provider 500' },
      false,
    );
    await tasks.openAttempt('run-b', 'running', 'w', 1);
    const done = await tasks.openAttempt('run-b', 'done', 'w', 1);
    await tasks.settle('run-b', 'done', done!.attempt, {
      status: 'success',
      totalSteps: 2,
      durationMs: 1,
    });

    const reason = 'the run spend limit of $1 is reached: $1.000200 spent';
    expect(await runs.haltForBudget('run-b', reason)).toEqual({ fenced: true, tasksEnded: 2 });
    const after = Object.fromEntries(
      (await tasks.listByRun('run-b')).map((task) => [
        task.task_id,
        { status: task.status, error_class: task.error_class, error: task.error },
      ]),
    );
    expect(after).toEqual({
      queued: {
        status: 'error',
        error_class: 'budget',
        error: `budget: ${reason} (the task never ran)`,
      },
      between: {
        status: 'error',
        error_class: 'budget',
        error: `budget: ${reason} (stopped between attempts)`,
      },
      running: { status: 'running', error_class: null, error: null },
      done: { status: 'success', error_class: null, error: null },
    });
    expect(await runs.haltOf('run-b')).toEqual({ halt: 'budget', reason });

    // A second worker's call ends nothing more and does not move the fence.
    expect(await runs.haltForBudget('run-b', 'another reason')).toEqual({
      fenced: false,
      tasksEnded: 0,
    });
    // The running attempt settles as its worker says; resume leaves budget stops alone.
    await tasks.settle('run-b', 'running', 1, {
      status: 'error',
      errorClass: 'budget',
      totalSteps: 3,
      durationMs: 1,
      error: 'budget: …',
    });
    expect(await tasks.runHasNoOpenTask('run-b')).toBe(true);
    expect(await tasks.reopen('run-b')).toEqual([]);
    await expect(runs.liftInfraHalt('run-b')).resolves.toBe(false);
  });

  it('opens no attempt of a fenced run, even for a task still open', async () => {
    const runs = new RunsRepository(services.db);
    const tasks = new TasksRepository(services.db);
    await createRun('run-p', ['a']);
    await services.db
      .updateTable('runs')
      .set({ halt: 'infra', halt_reason: 'paused: test' })
      .where('id', '=', 'run-p')
      .execute();
    expect(await tasks.openAttempt('run-p', 'a', 'w', 1)).toBeUndefined();
    expect((await tasks.get('run-p', 'a'))?.status).toBe('queued');
    expect(await runs.liftInfraHalt('run-p')).toBe(true);
    expect((await tasks.openAttempt('run-p', 'a', 'w', 1))?.attempt).toBe(1);
  });
});

describe('RunsRepository.haltOnInfraErrors', () => {
  /** Opens an attempt of each task and ends it: an infra error, or success. */
  async function endAttempts(
    runId: string,
    outcomes: Array<'infra' | 'ok' | 'shutdown'>,
    first = 0,
  ) {
    const tasks = new TasksRepository(services.db);
    for (const [index, outcome] of outcomes.entries()) {
      const taskId = `t${first + index}`;
      const opened = await tasks.openAttempt(runId, taskId, 'w', 1);
      if (outcome === 'ok')
        await tasks.settle(runId, taskId, opened!.attempt, {
          status: 'success',
          totalSteps: 1,
          durationMs: 1,
        });
      else
        await tasks.settle(
          runId,
          taskId,
          opened!.attempt,
          {
            status: 'error',
            errorClass: 'infra',
            totalSteps: 0,
            durationMs: 1,
            error: outcome === 'shutdown' ? 'handed back at worker shutdown' : 'provider 500',
          },
          false,
        );
    }
  }

  it('pauses once more than rate × window of the latest tasks failed on infrastructure (a retry pending counts), not before, and says why with the numbers', async () => {
    const runs = new RunsRepository(services.db);
    const ids = Array.from({ length: 12 }, (_, i) => `t${i}`);
    await createRun('run-i', ids, { max_infra_error_rate: 0.2, infra_window: 10 });
    // 2 of 10 is not more than 20 %; a shutdown hand-back is no fault.
    await endAttempts('run-i', ['ok', 'infra', 'ok', 'infra', 'shutdown', 'ok', 'ok']);
    expect(await runs.haltOnInfraErrors('run-i')).toBeUndefined();
    expect(await runs.haltOf('run-i')).toBeUndefined();
    await endAttempts('run-i', ['infra'], 7);
    const paused = await runs.haltOnInfraErrors('run-i');
    expect(paused).toEqual({
      infraFailed: 3,
      window: 10,
      maxRate: 0.2,
      reason:
        'paused: 3 of the last 7 settled tasks failed on infrastructure (more than 20.0% of a window of 10); `scheduler resume run-i` takes it up again',
    });
    expect(await runs.haltOf('run-i')).toEqual({ halt: 'infra', reason: paused!.reason });
    // Said once: a second check finds the run paused already.
    expect(await runs.haltOnInfraErrors('run-i')).toBeUndefined();
  });

  it('never pauses a run without the limit', async () => {
    const runs = new RunsRepository(services.db);
    await createRun('run-n', ['t0', 't1', 't2']);
    await endAttempts('run-n', ['infra', 'infra', 'infra']);
    expect(await runs.haltOnInfraErrors('run-n')).toBeUndefined();
  });
});
