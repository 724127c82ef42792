import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readRunSummary } from '@benchfleet/benchmark-kit';
import { benchmarks } from '@benchfleet/benchmarks';
import { JobProducer } from '@benchfleet/queue';
import { enqueueRun } from '@benchfleet/runs';
import {
  startCli,
  useTestServices,
  waitFor,
  waitForOutput,
  type StartedProcess,
} from '@benchfleet/testing';

const services = useTestServices();
const workerScript = fileURLToPath(
  new URL('../../../libs/runs/test-support/worker-runtime-process.ts', import.meta.url),
);
const children: ChildProcess[] = [];
const clis: StartedProcess[] = [];
let producer: JobProducer;

const webshop = benchmarks.get('webshop');

/** A worker of the webshop queue whose jobs take JOB_MS and that fails a job on its first stall. */
function startStallIntolerantWorker(workerId: string, jobMs: number): Promise<ChildProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', workerScript], {
    env: {
      ...services.env,
      WORKER_ID: workerId,
      JOB_MS: String(jobMs),
      MAX_STALLED: '0',
      QUEUE: webshop.job.queue,
      JOB_NAME: webshop.job.name,
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  children.push(child);
  return new Promise((resolve, reject) => {
    child.stdout?.on(
      'data',
      (chunk: Buffer) => chunk.toString().includes('ready') && resolve(child),
    );
    child.once('exit', (code) => reject(new Error(`worker exited early with ${code}`)));
  });
}

beforeAll(() => {
  producer = new JobProducer(services.redisUrl, services.prefix);
});

afterAll(async () => {
  for (const child of children) if (child.exitCode === null) child.kill('SIGKILL');
  for (const cli of clis) if (cli.child.exitCode === null) cli.child.kill('SIGKILL');
  await producer.close();
});

describe('a task whose job BullMQ fails as lost (its workers kept dying)', () => {
  it('gets an infrastructure error from the aggregate worker, and its run settles and is summarised', async () => {
    const aggregator = startCli('scheduler', ['worker', '--worker-id', 'aggregator'], {
      ...services.env,
      LOG_LEVEL: 'info',
    });
    clis.push(aggregator);
    await waitForOutput(aggregator, 'worker ready', 'the aggregate worker to be ready');
    const runId = await enqueueRun(
      { db: services.db, producer },
      {
        benchmark: webshop,
        name: 'lost',
        config: { catalog_id: 'demo' },
        model: null,
        agent: null,
        tasks: [
          {
            taskId: 'goal-0',
            domain: 'beauty',
            instruction: 'x',
            spec: { goal_index: 0, split: 'test', asin: 'B0' },
          },
        ],
      },
    );
    const doomed = await startStallIntolerantWorker('doomed', 60_000);
    await waitFor('the episode to start', async () => {
      const step = await services.db
        .selectFrom('steps')
        .select('step')
        .where('run_id', '=', runId)
        .executeTakeFirst();
      return step !== undefined;
    });
    doomed.kill('SIGKILL');
    // The next worker's stall check finds the dead worker's job and, with no stall allowed, fails it.
    await startStallIntolerantWorker('checker', 100);
    const task = await waitFor('the lost task to get its outcome', async () => {
      const row = await services.db
        .selectFrom('tasks')
        .selectAll()
        .where('run_id', '=', runId)
        .executeTakeFirstOrThrow();
      return row.status === 'error' ? row : undefined;
    });
    expect(task.error).toMatch(/^lost: job stalled more than allowable limit/);
    const attempts = await services.db
      .selectFrom('attempts')
      .selectAll()
      .where('run_id', '=', runId)
      .execute();
    expect(attempts.map((a) => [a.status, a.error_class])).toEqual([['error', 'infra']]);
    const summary = await waitFor('the run summary', async () => {
      const run = await services.db
        .selectFrom('runs')
        .select('summary')
        .where('id', '=', runId)
        .executeTakeFirstOrThrow();
      return readRunSummary(run.summary);
    });
    expect(summary).toMatchObject({ pending: 0, summary: { total_tasks: 1, errors: 1 } });
    aggregator.child.kill('SIGTERM');
    expect((await aggregator.exited).code).toBe(0);
  });
});
