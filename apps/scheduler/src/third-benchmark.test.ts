import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { readRunSummary } from '@benchfleet/benchmark-kit';
import { JobProducer } from '@benchfleet/queue';
import {
  ECHO_ENTRIES,
  killLeftoverProcesses,
  runCli,
  runScript,
  startScript,
  useTestServices,
  waitFor,
  waitForWorkerReady,
  type StartedProcess,
} from '@benchfleet/testing';

// A benchmark defined only in test code (libs/testing/src/echo-benchmark): its descriptor, its
// worker entry and a scheduler entry whose registry lists it beside the fleet's own. Nothing in the
// scheduler, queue, core or db code knows it, yet every command works on its runs.

const services = useTestServices();
const processes: StartedProcess[] = [];
let producer: JobProducer;

function echoScheduler(args: string[]) {
  return runScript(ECHO_ENTRIES.scheduler, args, services.env, 60_000);
}

async function startEchoWorker(id: string): Promise<StartedProcess> {
  const worker = startScript(ECHO_ENTRIES.worker, [], {
    ...services.env,
    BENCHFLEET_WORKER_ID: id,
    LOG_LEVEL: 'info',
  });
  processes.push(worker);
  await waitForWorkerReady(worker);
  return worker;
}

async function enqueue(args: string[]): Promise<string> {
  const result = await echoScheduler(['enqueue', ...args, '--json']);
  expect(result.stderr).toBe('');
  expect(result.code).toBe(0);
  return (JSON.parse(result.stdout) as { runId: string }).runId;
}

function tasksOf(runId: string) {
  return services.db
    .selectFrom('tasks')
    .selectAll()
    .where('run_id', '=', runId)
    .orderBy('seq')
    .execute();
}

async function settled(runId: string) {
  return waitFor(`run ${runId} to settle`, async () => {
    const tasks = await tasksOf(runId);
    return tasks.every((task) => task.status !== 'queued' && task.status !== 'running')
      ? tasks
      : undefined;
  });
}

beforeAll(() => {
  producer = new JobProducer(services.redisUrl, services.prefix);
});

afterEach(async () => {
  await killLeftoverProcesses(processes);
});

afterAll(async () => {
  await producer.close();
});

describe('a benchmark registered only in test code', () => {
  it('runs end to end: enqueue (told by its own flag), a worker, steps and outcomes, the aggregate summary, status', async () => {
    const aggregator = startScript(
      ECHO_ENTRIES.scheduler,
      ['worker', '--worker-id', 'echo-aggregator'],
      { ...services.env, LOG_LEVEL: 'info' },
    );
    processes.push(aggregator);
    await waitForWorkerReady(aggregator);
    const runId = await enqueue(['--echo-tasks', '6']);
    const run = await services.db
      .selectFrom('runs')
      .selectAll()
      .where('id', '=', runId)
      .executeTakeFirstOrThrow();
    expect(run).toMatchObject({ benchmark: 'echo', config: { step_ms: 20 } });
    await startEchoWorker('echo-1');

    const tasks = await settled(runId);
    expect(tasks.map((task) => [task.task_id, task.domain, task.status, task.total_steps])).toEqual(
      [
        ['echo-000', 'even', 'success', 1],
        ['echo-001', 'odd', 'failed', 2],
        ['echo-002', 'even', 'success', 3],
        ['echo-003', 'odd', 'failed', 1],
        ['echo-004', 'even', 'success', 2],
        ['echo-005', 'odd', 'failed', 3],
      ],
    );
    expect(tasks.every((task) => task.worker_id === 'echo-1')).toBe(true);
    const steps = await services.db
      .selectFrom('steps')
      .select(['task_id', 'step', 'text'])
      .where('run_id', '=', runId)
      .orderBy('task_id')
      .orderBy('step')
      .execute();
    expect(steps).toHaveLength(12);
    expect(steps[3]).toEqual({ task_id: 'echo-002', step: 1, text: 'say 2: step 1' });

    const summary = await waitFor('the summary', async () => {
      const row = await services.db
        .selectFrom('runs')
        .select('summary')
        .where('id', '=', runId)
        .executeTakeFirstOrThrow();
      const stored = readRunSummary(row.summary);
      return stored?.pending === 0 ? stored : undefined;
    });
    expect(summary).toMatchObject({
      benchmark: 'echo',
      success_label: 'scripted success',
      summary: { total_tasks: 6, completed: 3, failed: 3, success_rate: 0.5, avg_steps: 2 },
      per_domain: { even: { total: 3, completed: 3 }, odd: { total: 3, completed: 0 } },
      cost_usd: 0,
      scores: null,
    });

    const status = await echoScheduler(['status', runId, '--json']);
    expect(status.code).toBe(0);
    expect(JSON.parse(status.stdout)).toMatchObject({
      successLabel: 'scripted success',
      queueName: 'echo',
      done: 6,
      pending: 0,
      run: { succeeded: 3 },
    });
    const text = await echoScheduler(['status', runId]);
    expect(text.stdout).toContain(
      '6/6 done, 0 queued, 0 running, 3 success (scripted success), 3 failed',
    );
  });

  it('is cancelled and resumed like any other: cancel stops its running tasks, resume re-enqueues what Redis lost', async () => {
    await startEchoWorker('echo-2');
    const slow = await enqueue([
      '--benchmark',
      'echo',
      '--echo-tasks',
      '8',
      '--echo-step-ms',
      '60000',
    ]);
    await waitFor(
      'four tasks to run',
      async () => (await tasksOf(slow)).filter((task) => task.status === 'running').length === 4,
    );
    const cancelled = await echoScheduler(['cancel', slow]);
    expect(cancelled.code).toBe(0);
    expect(cancelled.stderr).toContain('8 task(s) cancelled, 4 waiting job(s) removed');
    expect((await settled(slow)).map((task) => task.status)).toEqual(Array(8).fill('cancelled'));
    await waitFor('the running attempts to close', async () => {
      const attempts = await services.db
        .selectFrom('attempts')
        .select('status')
        .where('run_id', '=', slow)
        .execute();
      return attempts.length === 4 && attempts.every((attempt) => attempt.status === 'cancelled');
    });

    // Redis loses the jobs of a run no worker has started: only Postgres knows it.
    await killLeftoverProcesses(processes);
    // Told by its domain alone this time.
    const lost = await enqueue(['--domain', 'even']);
    await producer.queue('echo').obliterate({ force: true });
    const resumed = await echoScheduler(['resume', lost]);
    expect(resumed.code).toBe(0);
    expect(resumed.stderr).toContain('2 task(s) re-enqueued');
    await startEchoWorker('echo-3');
    expect((await settled(lost)).map((task) => [task.task_id, task.status])).toEqual([
      ['echo-000', 'success'],
      ['echo-002', 'success'],
    ]);
    // No `scheduler worker` runs now: the worker that settled the last task wrote the summary.
    const summary = await waitFor('the summary', async () => {
      const row = await services.db
        .selectFrom('runs')
        .select(['summary', 'status'])
        .where('id', '=', lost)
        .executeTakeFirstOrThrow();
      const stored = readRunSummary(row.summary);
      return stored?.pending === 0 ? { stored, status: row.status } : undefined;
    });
    expect(summary).toMatchObject({
      status: 'finished',
      stored: { summary: { total_tasks: 2, completed: 2 } },
    });
  });

  it('is unknown to a scheduler whose registry does not list it: one line naming it', async () => {
    const runId = await enqueue(['--echo-tasks', '1']);
    const result = await runCli('scheduler', ['status', runId], services.env);
    expect(result.code).toBe(1);
    expect(result.stderr.trim()).toBe(
      'scheduler: benchmark echo is not known to this build (known: osworld, webshop)',
    );
  });
});
