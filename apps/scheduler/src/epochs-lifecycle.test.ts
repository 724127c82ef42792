import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { benchmarks } from '@benchfleet/benchmarks';
import { computeRunSummary } from '@benchfleet/runs';
import { JobProducer, taskJobId } from '@benchfleet/queue';
import {
  RunRows,
  startFakeLlm,
  TestClis,
  useTestServices,
  waitFor,
  waitForWorkerReady,
} from '@benchfleet/testing';
import { demoCatalogRequest, importWebshopCatalog } from '@benchfleet/webshop-benchmark';

// Resume, cancel and spend limits of a run of epochs: each sample is its own task row and job.

const services = useTestServices();
const runRows = new RunRows(services);
const clis = new TestClis(services, { LOG_LEVEL: 'info' });
let producer: JobProducer;
const GOALS = 12;

const RULE_RUN = ['--benchmark', 'webshop', '--goals', `0-${GOALS - 1}`, '--agent', 'rule'];

function enqueueRule(args: string[]): Promise<string> {
  return clis.enqueue([...RULE_RUN, ...args]);
}

beforeAll(async () => {
  producer = new JobProducer(services.redisUrl, services.prefix);
  await importWebshopCatalog(services.db, demoCatalogRequest({ seed: 0, products: 300 }));
});

afterEach(async () => {
  await clis.killLeftovers();
});

afterAll(async () => {
  await producer.close();
});

/** Takes the jobs of the given samples out of Redis, as a lost queue would. */
async function dropJobs(runId: string, taskIds: readonly string[]): Promise<void> {
  const queue = producer.queue('webshop');
  for (const taskId of taskIds) await queue.remove(taskJobId(runId, taskId));
}

describe('resume, cancel and budgets per epoch', () => {
  it('resume re-enqueues exactly the samples whose jobs were lost, and each sample runs once', async () => {
    const runId = await enqueueRule(['--epochs', '3']);
    const rows = await runRows.tasksOf(runId);
    const epochTwo = rows.filter((row) => row.epoch === 2).map((row) => row.task_id);
    await dropJobs(runId, epochTwo);
    const resumed = await clis.scheduler(['resume', runId]);
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(resumed.stderr).toContain(
      `${GOALS} task(s) re-enqueued, ${2 * GOALS} already queued, 0 running now`,
    );
    await waitForWorkerReady(
      clis.start('worker-webshop', ['--worker-id', 'resumed', '--concurrency', '6']),
    );
    const tasks = await runRows.settled(runId);
    const attempts = await services.db
      .selectFrom('attempts')
      .select(['task_id', 'attempt'])
      .where('run_id', '=', runId)
      .execute();
    expect(attempts.map((a) => `${a.task_id}#${a.attempt}`).sort()).toEqual(
      tasks.map((t) => `${t.task_id}#1`).sort(),
    );
    // Deterministic agent, same goal: every epoch of a task has the same verdict.
    const summary = await computeRunSummary(services.db, benchmarks, runId);
    expect(summary.epochs?.flip_rate).toMatchObject({ tasks: GOALS, flipped: 0 });
  });

  it('cancel ends the epochs not yet run; they are not scored, the settled epoch is', async () => {
    const runId = await enqueueRule(['--epochs', '3']);
    const rows = await runRows.tasksOf(runId);
    // Only epoch 1 can run: the later epochs' jobs are gone and no keeper puts them back.
    await dropJobs(
      runId,
      rows.filter((row) => row.epoch > 1).map((row) => row.task_id),
    );
    const worker = clis.start('worker-webshop', [
      '--worker-id',
      'first-epoch',
      '--concurrency',
      '6',
    ]);
    await waitFor('epoch 1 to settle', async () =>
      (await runRows.tasksOf(runId))
        .filter((t) => t.epoch === 1)
        .every((t) => t.status === 'success' || t.status === 'failed'),
    );
    worker.child.kill('SIGTERM');
    await worker.exited;
    const cancelled = await clis.scheduler(['cancel', runId]);
    expect(cancelled.code, cancelled.stderr).toBe(0);
    const after = await runRows.tasksOf(runId);
    for (const task of after) {
      if (task.epoch === 1) expect(['success', 'failed']).toContain(task.status);
      else expect(task).toMatchObject({ status: 'cancelled', error: 'run cancelled', attempts: 0 });
    }
    const summary = await computeRunSummary(services.db, benchmarks, runId);
    const firstEpochPasses = after.filter((t) => t.epoch === 1 && t.status === 'success').length;
    expect(summary.epochs).toMatchObject({ epochs: 3, tasks: GOALS });
    expect(summary.epochs?.by_k).toHaveLength(1);
    expect(summary.epochs?.by_k[0]?.pass_at_k.value).toBeCloseTo(firstEpochPasses / GOALS, 4);
    expect(summary.epochs?.flip_rate).toMatchObject({ tasks: 0, flipped: 0, value: null });
  });

  it('a task spend limit holds per sample: every epoch spends up to its own limit and ends with budget, none scored', async () => {
    const llm = await startFakeLlm({ latencyMs: 2 });
    try {
      const prices = JSON.stringify({ 'fake-model': llm.price });
      const result = await clis.scheduler([
        'enqueue',
        '--benchmark',
        'webshop',
        '--goals',
        '0-1',
        '--agent',
        'llm',
        '--llm-base-url',
        llm.baseUrl,
        '--llm-model',
        'fake-model',
        '--max-steps',
        '30',
        '--max-task-cost-usd',
        '0.012',
        '--price-table',
        prices,
        '--epochs',
        '3',
        '--json',
      ]);
      expect(result.code, result.stderr).toBe(0);
      const runId = (JSON.parse(result.stdout) as { runId: string }).runId;
      llm.setFaults({ garbage: true });
      clis.start('worker-webshop', ['--worker-id', 'budget', '--concurrency', '6'], {
        LLM_API_KEY: 'sk-epochs-test-key-0123456789',
        LLM_PRICE_TABLE: prices,
      });
      const tasks = await runRows.settled(runId);
      expect(tasks).toHaveLength(6);
      for (const task of tasks) {
        expect(task).toMatchObject({ status: 'error', error_class: 'budget', attempts: 1 });
        // Its own limit, not one shared by the task's epochs: each ran calls toward it.
        expect(task.total_steps).toBeGreaterThan(1);
        expect(task.cost_usd).toBeGreaterThan(0.4 * 0.012);
      }
      // Together a task's three epochs spent well past one limit: each epoch had its own.
      for (const base of ['goal-00000', 'goal-00001']) {
        const spent = tasks
          .filter((t) => t.base_task_id === base)
          .reduce((sum, t) => sum + (t.cost_usd ?? 0), 0);
        expect(spent).toBeGreaterThan(1.2 * 0.012);
      }
      const summary = await computeRunSummary(services.db, benchmarks, runId);
      expect(summary.epochs).toMatchObject({ epochs: 3, tasks: 0, by_k: [] });
    } finally {
      await llm.close();
    }
  });
});
