import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RunsRepository } from '@benchfleet/db';
import { useTestServices } from '@benchfleet/testing';
import {
  checkServedJobs,
  defineTaskJob,
  HandlerCatalogError,
  JobProducer,
  serve,
  taskJobId,
} from '@benchfleet/queue';
import { RUNTIME_TEST_JOB } from '../../test-support/runtime-test-job.js';

const services = useTestServices();
const workerScript = fileURLToPath(
  new URL('../../test-support/worker-runtime-process.ts', import.meta.url),
);
let producer: JobProducer;
const children: ChildProcess[] = [];

function startWorker(workerId: string, extraEnv: Record<string, string>): Promise<ChildProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', workerScript], {
    env: { ...services.env, WORKER_ID: workerId, ...extraEnv },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  children.push(child);
  return new Promise((resolve, reject) => {
    child.stdout?.on('data', (chunk: Buffer) => {
      if (chunk.toString().includes('ready')) resolve(child);
    });
    child.once('exit', (code) => reject(new Error(`worker exited early with ${code}`)));
  });
}

function exitOf(child: ChildProcess): Promise<{ code: number | null; signal: string | null }> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null)
      resolve({ code: child.exitCode, signal: child.signalCode });
    else child.once('exit', (code, signal) => resolve({ code, signal }));
  });
}

async function waitFor<T>(
  what: string,
  probe: () => Promise<T | undefined | false>,
  timeoutMs = 600_000,
): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

async function createRunWithOneTask(runId: string): Promise<void> {
  await new RunsRepository(services.db).createWithTasks({
    run: {
      id: runId,
      name: runId,
      benchmark: 'webshop',
      config: JSON.stringify({}),
      code_version: 'test',
    },
    tasks: [
      {
        task_id: 'goal-0',
        seq: 0,
        domain: 'webshop',
        instruction: 'buy a thing',
        spec: JSON.stringify({}),
      },
    ],
  });
  await producer.enqueue(RUNTIME_TEST_JOB, {
    payload: { runId, taskId: 'goal-0' },
    jobId: taskJobId(runId, 'goal-0'),
  });
}

/** Locks no starved worker loses (10 min): for tests where no job's lock should ever lapse. */
const NO_LAPSE = { LOCK_MS: '600000' };

/** The job's state once BullMQ has finished with it ('removed' when it is gone). */
async function settledJobState(runId: string): Promise<string> {
  const queue = producer.queue(RUNTIME_TEST_JOB.queue);
  return waitFor('the job to leave the active list', async () => {
    const job = await queue.getJob(taskJobId(runId, 'goal-0'));
    const state = job ? await job.getState() : 'removed';
    return state === 'active' ? undefined : state;
  });
}

function taskRow(runId: string) {
  return services.db
    .selectFrom('tasks')
    .selectAll()
    .where('run_id', '=', runId)
    .executeTakeFirstOrThrow();
}

function attemptRows(runId: string) {
  return services.db
    .selectFrom('attempts')
    .selectAll()
    .where('run_id', '=', runId)
    .orderBy('attempt')
    .execute();
}

/** Starts a worker on a one-task run, sends SIGTERM once the task runs, and waits for the exit. */
async function sigtermWhileRunning(runId: string, workerId: string, env: Record<string, string>) {
  const worker = await startWorker(workerId, env);
  await createRunWithOneTask(runId);
  await waitFor('the task to run', async () => (await taskRow(runId)).status === 'running');
  worker.kill('SIGTERM');
  return { exit: await exitOf(worker) };
}

beforeAll(() => {
  producer = new JobProducer(services.redisUrl, services.prefix);
});

afterAll(async () => {
  for (const child of children) if (child.exitCode === null) child.kill('SIGKILL');
  await producer.close();
});

describe('checkServedJobs', () => {
  const other = defineTaskJob({
    name: 'other-task',
    queue: 'other-queue',
    attempts: 1,
    backoff: { type: 'fixed', delay: 1 },
    deadlineMs: 1_000,
  });
  const handler = async () => undefined;

  it('accepts exactly one handler per job of the queue', () => {
    expect([
      ...checkServedJobs(RUNTIME_TEST_JOB.queue, [serve(RUNTIME_TEST_JOB, handler)]).keys(),
    ]).toEqual([RUNTIME_TEST_JOB.name]);
  });

  it('names a missing handler, a second one and a job of another queue', () => {
    expect(() => checkServedJobs(RUNTIME_TEST_JOB.queue, [])).toThrow(/no job to serve/);
    expect(() =>
      checkServedJobs(RUNTIME_TEST_JOB.queue, [
        serve(RUNTIME_TEST_JOB, handler),
        serve(RUNTIME_TEST_JOB, handler),
      ]),
    ).toThrow(/two handlers for job runtime-test-task/);
    expect(() =>
      checkServedJobs(RUNTIME_TEST_JOB.queue, [
        serve(RUNTIME_TEST_JOB, handler),
        serve(other, handler),
      ]),
    ).toThrow(HandlerCatalogError);
  });
});

describe('worker runtime with real worker processes', () => {
  // Both workers keep the product's lock (15 s): the dead worker's lapses only when it stops renewing
  // it, which the test waits for (the lost-worker bound), and the live one keeps its own on a starved CPU.
  it('redelivers the job of a SIGKILLed worker to another worker: two attempts, one outcome', async () => {
    const runId = 'run-sigkill';
    const first = await startWorker('worker-a', { JOB_MS: '60000' });
    await createRunWithOneTask(runId);
    await waitFor('the first attempt to record a step', async () => {
      const steps = await services.db
        .selectFrom('steps')
        .select('step')
        .where('run_id', '=', runId)
        .execute();
      return steps.length > 0;
    });
    first.kill('SIGKILL');
    await exitOf(first);

    const second = await startWorker('worker-b', { JOB_MS: '300' });
    await waitFor('the task to succeed', async () => (await taskRow(runId)).status === 'success');
    // The row is written before BullMQ moves the job on: its state is read once it has.
    expect(await settledJobState(runId)).toBe('completed');
    const task = await taskRow(runId);
    expect(task.status).toBe('success');
    const attempts = await attemptRows(runId);
    expect(attempts.map((a) => [a.attempt, a.worker_id, a.status, a.error_class])).toEqual([
      [1, 'worker-a', 'error', 'infra'],
      [2, 'worker-b', 'success', null],
    ]);
    expect(task.attempts).toBe(2);
    expect(task.worker_id).toBe('worker-b');
    second.kill('SIGTERM');
    expect((await exitOf(second)).code).toBe(0);
  });

  it('SIGTERM lets an active job finish within the grace period and exits 0', async () => {
    const runId = 'run-sigterm-finish';
    const { exit } = await sigtermWhileRunning(runId, 'worker-c', {
      JOB_MS: '1500',
      // Ample on a busy machine: the job finishes inside it, not handed back.
      GRACE_MS: '60000',
      ...NO_LAPSE,
    });
    expect(exit.code).toBe(0);
    const task = await taskRow(runId);
    expect(task.status).toBe('success');
    expect(task.total_steps).toBeGreaterThan(0);
  });

  it('SIGTERM hands a job that outlives the grace period back to the queue, where another worker finishes it', async () => {
    const runId = 'run-sigterm-handback';
    // A job far longer than the test may take: a worker that waited for it instead of handing it
    // back would never exit, and the test would fail on its time limit.
    const { exit } = await sigtermWhileRunning(runId, 'worker-d', {
      JOB_MS: '3600000',
      GRACE_MS: '300',
      ...NO_LAPSE,
    });
    expect(exit.code).toBe(0);
    const job = await producer.queue(RUNTIME_TEST_JOB.queue).getJob(taskJobId(runId, 'goal-0'));
    expect(await job?.getState()).toBe('waiting');
    expect(job?.attemptsMade).toBe(0);
    expect((await taskRow(runId)).status).toBe('running');
    expect((await attemptRows(runId)).map((a) => [a.status, a.error])).toEqual([
      ['error', 'handed back at worker shutdown'],
    ]);

    const next = await startWorker('worker-e', { JOB_MS: '200', ...NO_LAPSE });
    await waitFor(
      'the handed-back task to succeed',
      async () => (await taskRow(runId)).status === 'success',
    );
    expect((await attemptRows(runId)).map((a) => a.status)).toEqual(['error', 'success']);
    next.kill('SIGTERM');
    await exitOf(next);
  });
});
