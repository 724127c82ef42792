import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { JobProducer } from '@benchfleet/queue';
import {
  osworldTestTask,
  startCli,
  startFakeBytebot,
  useTestServices,
  waitFor,
  withFakeScenario,
  writeOsworldTestDataset,
  type FakeBytebot,
  type StartedProcess,
  enqueueTestRun,
} from '@benchfleet/testing';

// Four stacks, four worker processes: every task runs once, no stack ever runs two tasks at once,
// and the fleet gets through four times the work in about the time one stack needs for a quarter.

const services = useTestServices();
let producer: JobProducer;
let scratchDir: string;
const fakes: FakeBytebot[] = [];
const workers: StartedProcess[] = [];

/** 5 computer actions, then set_task_status: 6 steps of ~85 ms each on the agent's side. */
const STEADY_STEPS = 5;
const FAKE_OPTIONS = {
  pendingDelayMs: 10,
  stepIntervalMs: 80,
  toolDelayMs: 5,
  scenarios: { steady: { steps: STEADY_STEPS, ending: { kind: 'completed', answer: 'Done.' } } },
} as const;

beforeAll(async () => {
  producer = new JobProducer(services.redisUrl, services.prefix);
  scratchDir = await mkdtemp(path.join(tmpdir(), 'worker-osworld-fleet-'));
});

afterAll(async () => {
  for (const worker of workers)
    if (worker.child.exitCode === null && worker.child.signalCode === null)
      worker.child.kill('SIGKILL');
  for (const fake of fakes) await fake.close();
  await producer.close();
  await rm(scratchDir, { recursive: true, force: true });
});

async function startStack(stackId: string): Promise<{ fake: FakeBytebot; worker: StartedProcess }> {
  const fake = await startFakeBytebot(FAKE_OPTIONS);
  fakes.push(fake);
  const worker = startCli(
    'worker-osworld',
    ['--bytebot-url', fake.url, '--stack-id', stackId, '--grace-s', '5'],
    {
      ...services.env,
      BENCHFLEET_ARTIFACTS: path.join(scratchDir, 'artifacts'),
    },
  );
  workers.push(worker);
  return { fake, worker };
}

async function workersReady(count: number): Promise<void> {
  // LOG_LEVEL is warn: readiness shows as the workers' BullMQ connections in Redis.
  await waitFor(
    `${count} worker(s) to be ready`,
    async () => (await producer.queue('osworld').getWorkersCount()) >= count,
    600_000,
    50,
  );
}

/** Enqueues `count` tasks and returns the wall time until every one of them has an outcome. */
async function runTasks(name: string, count: number): Promise<{ runId: string; wallMs: number }> {
  const tasks = Array.from({ length: count }, (_, i) => {
    const taskId = `${name}-${String(i).padStart(3, '0')}`;
    return osworldTestTask(taskId, withFakeScenario(`Fleet task ${taskId}`, 'steady'));
  });
  const datasetPath = await writeOsworldTestDataset(scratchDir, name, tasks);
  const plan = { benchmark: 'osworld', runName: name, flags: { dataset: datasetPath } };
  const started = Date.now();
  const runId = await enqueueTestRun({ db: services.db, producer }, plan);
  await waitFor(
    `run ${name} to settle`,
    async () => {
      const open = await services.db
        .selectFrom('tasks')
        .select('task_id')
        .where('run_id', '=', runId)
        .where('status', 'in', ['queued', 'running'])
        .executeTakeFirst();
      return open === undefined;
    },
    600_000,
    25,
  );
  return { runId, wallMs: Date.now() - started };
}

describe('worker-osworld fleet', () => {
  it('four stacks run 40 tasks in about the time one stack runs 10, never two tasks at once on a stack', async () => {
    const first = await startStack('stack-1');
    await workersReady(1);
    const single = await runTasks('single', 10);

    const others = await Promise.all(['stack-2', 'stack-3', 'stack-4'].map((id) => startStack(id)));
    const fleet = [first, ...others];
    await workersReady(fleet.length);
    const four = await runTasks('fleet', 40);

    const ratio = four.wallMs / single.wallMs;
    console.info(
      `one stack, 10 tasks: ${single.wallMs} ms; four stacks, 40 tasks: ${four.wallMs} ms; ratio ${ratio.toFixed(2)} (ideal 1.0)`,
    );

    const tasks = await services.db
      .selectFrom('tasks')
      .selectAll()
      .where('run_id', 'in', [single.runId, four.runId])
      .execute();
    expect(tasks).toHaveLength(50);
    for (const task of tasks) {
      expect(task).toMatchObject({
        status: 'success',
        final_api_status: 'COMPLETED',
        total_steps: STEADY_STEPS + 1,
        attempts: 1,
      });
    }
    const fleetTasks = tasks.filter((task) => task.run_id === four.runId);
    expect(new Set(fleetTasks.map((task) => task.worker_id))).toEqual(
      new Set(['stack-1', 'stack-2', 'stack-3', 'stack-4']),
    );

    // Each benchmark task became exactly one Bytebot task, and each stack ran one at a time.
    expect(fakes.reduce((sum, fake) => sum + fake.stats.createdTasks, 0)).toBe(50);
    expect(fakes.map((fake) => fake.stats.maxConcurrentRunning)).toEqual([1, 1, 1, 1]);
    expect(fakes.reduce((sum, fake) => sum + fake.stats.cancels, 0)).toBe(0);
    for (const stackId of ['stack-1', 'stack-2', 'stack-3', 'stack-4']) {
      const spans = tasks
        .filter((task) => task.worker_id === stackId)
        .map((task) => [task.started_at!.getTime(), task.finished_at!.getTime()] as const)
        .sort((a, b) => a[0] - b[0]);
      for (let i = 1; i < spans.length; i++)
        expect(spans[i]![0]).toBeGreaterThanOrEqual(spans[i - 1]![1]);
    }

    // One stack at a time would take 4x; the bound leaves room for a loaded CI machine.
    expect(ratio).toBeLessThan(2.5);

    for (const { worker } of fleet) {
      worker.child.kill('SIGTERM');
      expect((await worker.exited).code).toBe(0);
    }
  });
});
