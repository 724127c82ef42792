import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { JobProducer } from '@benchfleet/queue';
import {
  runCli,
  RunRows,
  startFakeLlm,
  TestClis,
  useTestServices,
  waitFor,
  waitForWorkerReady,
  type FakeLlm,
} from '@benchfleet/testing';
import { readRunSummary, type RunSummary } from '@benchfleet/benchmark-kit';
import { TasksRepository } from '@benchfleet/db';
import { sql } from 'kysely';
import { enqueueTestRun, type TestRunInput } from '@benchfleet/testing';
import { demoCatalogRequest, importWebshopCatalog } from '@benchfleet/webshop-benchmark';

const services = useTestServices();
const runRows = new RunRows(services);
const clis = new TestClis(services, { BENCHFLEET_LOCK_MS: '1000' });
let producer: JobProducer;
let llm: FakeLlm;

async function enqueue(maxTasks: number, flags: Record<string, string>): Promise<string> {
  return enqueueTestRun({ db: services.db, producer }, {
    benchmark: 'webshop',
    maxTasks,
    flags: { split: 'test', ...flags },
  } satisfies TestRunInput);
}

beforeAll(async () => {
  producer = new JobProducer(services.redisUrl, services.prefix);
  llm = await startFakeLlm({ latencyMs: 150 });
  await importWebshopCatalog(services.db, demoCatalogRequest({ seed: 0, products: 400 }));
});

// A test that failed half-way must not leave workers that take the next test's jobs.
afterEach(async () => {
  llm.release();
  await clis.killLeftovers();
});

afterAll(async () => {
  await producer.close();
  await llm.close();
});

describe('a run interrupted by killing every worker', () => {
  it('is finished by `scheduler resume`, and the summary counts every task exactly once', async () => {
    const runId = await enqueue(40, {
      agent: 'llm',
      llmBaseUrl: llm.baseUrl,
      llmModel: 'fake-model',
    });
    const aggregator = clis.start(
      'scheduler',
      ['worker', '--worker-id', 'aggregator', '--metrics-port', '0'],
      { LOG_LEVEL: 'info' },
    );
    const doomed = [
      clis.start('worker-webshop', ['--worker-id', 'doomed-1', '--concurrency', '3']),
      clis.start('worker-webshop', ['--worker-id', 'doomed-2', '--concurrency', '3']),
    ];
    await waitFor(
      'some episodes to finish',
      async () =>
        (await runRows.tasksOf(runId)).filter(
          (t) => t.status === 'success' || t.status === 'failed',
        ).length >= 6,
    );
    // From here no episode can finish: the workers die with work in hand, however fast they were.
    llm.hold();
    await waitFor('an episode waiting on the model', async () => llm.held() > 0, 600_000, 20);
    for (const worker of doomed) worker.child.kill('SIGKILL');
    await Promise.all(doomed.map((worker) => worker.exited));
    // Redis loses its queue too (a restart without persistence): only Postgres knows what is left.
    await producer.queue('webshop').obliterate({ force: true });
    const before = await runRows.tasksOf(runId);
    const unfinished = before.filter((t) => t.status === 'queued' || t.status === 'running').length;
    expect(unfinished).toBeGreaterThan(0);

    llm.release();
    const resumed = await runCli('scheduler', ['resume', runId], services.env);
    expect(resumed.code).toBe(0);
    expect(resumed.stderr).toContain(`${unfinished} task(s) re-enqueued`);
    const rescuer = clis.start('worker-webshop', ['--worker-id', 'rescuer', '--concurrency', '8']);
    const tasks = await runRows.settled(runId);
    expect(tasks).toHaveLength(40);
    const summary = await runRows.storedSummary(runId);
    expect(summary.summary.total_tasks).toBe(40);
    expect(
      summary.summary.succeeded +
        summary.summary.failed +
        summary.summary.cancelled +
        summary.summary.errors,
    ).toBe(40);
    expect(summary.summary.succeeded).toBe(tasks.filter((t) => t.status === 'success').length);
    const perDomainTotal = Object.values(summary.per_domain).reduce((sum, d) => sum + d.total, 0);
    expect(perDomainTotal).toBe(40);
    // Interrupted tasks have a second attempt; no task has more than one outcome.
    const attempts = await services.db
      .selectFrom('attempts')
      .selectAll()
      .where('run_id', '=', runId)
      .execute();
    const successes = attempts.filter((a) => a.status === 'success' || a.status === 'failed');
    expect(new Set(successes.map((a) => a.task_id)).size).toBe(successes.length);
    expect(attempts.some((a) => a.attempt === 2)).toBe(true);
    // The aggregate worker is observable like the others (the summary itself came from the worker
    // that settled the last task, so no aggregate job had to run).
    const { metricsPort } = await waitForWorkerReady(aggregator);
    expect((await fetch(`http://127.0.0.1:${metricsPort}/healthz`)).status).toBe(200);
    const metrics = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
    expect(metrics).toMatch(/benchfleet_queue_depth\{queue="aggregate",worker="aggregator"\} \d+/);
    rescuer.child.kill('SIGTERM');
    aggregator.child.kill('SIGTERM');
    expect((await rescuer.exited).code).toBe(0);
    expect((await aggregator.exited).code).toBe(0);
  });
});

describe('scheduler cancel', () => {
  it('removes waiting jobs, aborts active episodes and marks the run cancelled', async () => {
    // The LLM answers nothing until the test is over: the two active episodes are still running
    // when the cancel arrives, however slow or fast the machine is.
    llm.hold();
    const runId = await enqueue(20, {
      agent: 'llm',
      llmBaseUrl: llm.baseUrl,
      llmModel: 'fake-model',
    });
    const worker = clis.start('worker-webshop', ['--worker-id', 'canceller', '--concurrency', '2']);
    await waitFor('two episodes to wait for the LLM', () => llm.held() === 2, 600_000);
    const result = await runCli('scheduler', ['cancel', runId], services.env);
    expect(result.code).toBe(0);
    expect(result.stderr).toMatch(/cancelled: 20 task\(s\) cancelled, 18 waiting job\(s\) removed/);
    const tasks = await runRows.settled(runId, 600_000);
    expect(tasks.map((t) => t.status)).toEqual(Array(20).fill('cancelled'));
    const counts = await producer.counts('webshop');
    expect(counts.wait).toBe(0);
    // The two active episodes saw their signal and closed their attempts as cancelled.
    const attempts = await waitFor(
      'the active attempts to close',
      async () => {
        const rows = await services.db
          .selectFrom('attempts')
          .selectAll()
          .where('run_id', '=', runId)
          .execute();
        return rows.length === 2 && rows.every((a) => a.status !== 'running') ? rows : undefined;
      },
      600_000,
    );
    expect(attempts.map((a) => [a.status, a.error])).toEqual([
      ['cancelled', 'run cancelled'],
      ['cancelled', 'run cancelled'],
    ]);
    const run = await services.db
      .selectFrom('runs')
      .selectAll()
      .where('id', '=', runId)
      .executeTakeFirstOrThrow();
    expect(run.status).toBe('cancelled');
    expect(readRunSummary(run.summary)?.summary.cancelled).toBe(20);
    llm.release();
    worker.child.kill('SIGTERM');
    expect((await worker.exited).code).toBe(0);
  });
});

describe('scheduler aggregate', () => {
  it('writes final.json numbers and a Markdown report on demand', async () => {
    const runId = await enqueue(12, { agent: 'rule' });
    const worker = clis.start('worker-webshop', ['--worker-id', 'agg-worker']);
    const tasks = await runRows.settled(runId);
    worker.child.kill('SIGTERM');
    await worker.exited;
    const dir = mkdtempSync(join(tmpdir(), 'aggregate-'));
    const result = await runCli(
      'scheduler',
      ['aggregate', runId, '--out', join(dir, 'final.json'), '--markdown', join(dir, 'report.md')],
      services.env,
    );
    expect(result.code).toBe(0);
    const summary = JSON.parse(readFileSync(join(dir, 'final.json'), 'utf8')) as RunSummary;
    const meanReward = tasks.reduce((sum, t) => sum + (t.reward ?? 0), 0) / tasks.length;
    expect(summary.summary.total_tasks).toBe(12);
    expect(summary.scores?.average_reward).toBeCloseTo(meanReward, 4);
    expect(summary.scores?.score).toBeCloseTo(meanReward * 100, 2);
    expect(summary.scores?.bought_rate).toBe(1);
    expect(summary.summary.avg_steps).toBe(3);
    expect(readFileSync(join(dir, 'report.md'), 'utf8')).toContain(`| ${summary.scores?.score} |`);

    // The same run as trajectories, one JSON line per episode (ReAct/LATS style).
    const out = join(dir, 'trajectories');
    const exported = await runCli('scheduler', ['export', runId, '--out', out], services.env);
    expect(exported.stderr).toContain(`12 task(s) written to ${out}`);
    expect(exported.code).toBe(0);
    expect(readdirSync(out)).toEqual(['trajectories.jsonl']);
    const lines = readFileSync(join(out, 'trajectories.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as Trajectory);
    expect(lines.map((line) => line.task_id)).toEqual(tasks.map((task) => task.task_id));
    const steps = await services.db
      .selectFrom('steps')
      .selectAll()
      .where('run_id', '=', runId)
      .orderBy('task_id')
      .orderBy('step')
      .execute();
    for (const [i, line] of lines.entries()) {
      const task = tasks[i]!;
      const result = task.result as {
        purchased_asin: string;
        reward_info: Record<string, unknown>;
      };
      expect(line).toMatchObject({
        instruction: task.instruction,
        reward: task.reward,
        status: task.status,
        stop_reason: 'bought',
        agent: 'rule',
      });
      expect(line.purchase?.asin).toBe(result.purchased_asin);
      expect(line.reward_info).toEqual(result.reward_info);
      const own = steps.filter((step) => step.task_id === task.task_id);
      expect(
        line.steps.map((step) => [step.step, step.action, step.observation, step.reward]),
      ).toEqual(
        own.map((step) => [
          step.step,
          (step.action as { action: string }).action,
          step.observation,
          step.reward,
        ]),
      );
    }
    // Each step has its own time, rising: stamped as it happened (to the microsecond), not when written.
    const stamps = await sql<{
      task_id: string;
      distinct_at: number;
      steps: number;
      rising: boolean;
    }>`
      select task_id, count(distinct at)::int as distinct_at, count(*)::int as steps,
             bool_and(at > coalesce(previous, '-infinity')) as rising
      from (select task_id, at, lag(at) over (partition by task_id order by step) as previous from steps where run_id = ${runId}) s
      group by task_id`.execute(services.db);
    expect(stamps.rows).toHaveLength(12);
    for (const row of stamps.rows)
      expect(row).toMatchObject({ distinct_at: row.steps, rising: true });
  });
});

interface Trajectory {
  task_id: string;
  steps: Array<{ step: number; action: string; observation: string; reward: number }>;
  purchase: { asin: string } | null;
  reward_info: Record<string, unknown>;
}

describe('scheduler status, runs and retry', () => {
  it('reports progress as JSON, lists the run, and retries the tasks in a given status', async () => {
    const runId = await enqueue(6, { agent: 'rule' });
    // Two tasks end in a permanent error before any worker sees them: resume leaves them, retry takes them.
    const tasks = new TasksRepository(services.db);
    for (const taskId of ['goal-00000', 'goal-00001']) {
      const opened = await tasks.openAttempt(runId, taskId, 'gone', 5);
      await tasks.settle(runId, taskId, opened!.attempt, {
        status: 'error',
        errorClass: 'permanent',
        totalSteps: 0,
        durationMs: 1,
        error: 'bad task data',
      });
    }
    await producer.queue('webshop').obliterate({ force: true });
    // Redis lost the jobs and nothing consumes the queue: status says so instead of an eta.
    const lost = await runCli('scheduler', ['status', runId], services.env);
    expect(lost.code).toBe(0);
    expect(lost.stdout).toContain(
      '  ! no worker is consuming queue webshop: start one, e.g. `npx worker-webshop --concurrency 32`',
    );
    expect(lost.stdout).toContain(
      `  ! 4 open task(s) have no job that will run them (Redis lost them, or they failed out): \`scheduler worker\` re-enqueues them, or run \`scheduler resume ${runId}\``,
    );
    expect(lost.stdout).toContain('  ! no `scheduler worker` runs');
    expect(lost.stdout).not.toMatch(/eta/);
    await enqueueRunRemainder(runId);

    const status = await runCli('scheduler', ['status', runId, '--json'], services.env);
    expect(status.code).toBe(0);
    const snapshot = JSON.parse(status.stdout) as {
      done: number;
      pending: number;
      run: { errors: number; total: number };
    };
    expect(snapshot).toMatchObject({
      done: 2,
      pending: 4,
      jobless: 0,
      run: { errors: 2, total: 6 },
    });

    const worker = clis.start('worker-webshop', ['--worker-id', 'retrier']);
    await waitFor(
      'the other tasks',
      async () =>
        (await runRows.tasksOf(runId)).filter(
          (t) => t.status === 'success' || t.status === 'failed',
        ).length === 4,
    );
    const retried = await runCli('scheduler', ['retry', runId, '--status', 'error'], services.env);
    expect(retried.code).toBe(0);
    expect(retried.stderr).toContain('2 task(s) re-enqueued');
    const finished = await runRows.settled(runId);
    expect(finished.every((t) => t.status === 'success' || t.status === 'failed')).toBe(true);
    expect(finished.find((t) => t.task_id === 'goal-00000')?.attempts).toBe(2);

    const runs = await runCli('scheduler', ['runs', '--json'], services.env);
    const listed = runs.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { run_id: string; total: number; errors: number });
    expect(listed.find((r) => r.run_id === runId)).toMatchObject({ total: 6, errors: 0 });
    const bad = await runCli('scheduler', ['retry', runId, '--status', 'broken'], services.env);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--status broken: expected one of queued, running, success/);
    worker.child.kill('SIGTERM');
    await worker.exited;
  });
});

/** Puts the queued tasks of a run back on the queue (its jobs were wiped above). */
async function enqueueRunRemainder(runId: string): Promise<void> {
  const result = await runCli('scheduler', ['resume', runId], services.env);
  expect(result.code).toBe(0);
}
