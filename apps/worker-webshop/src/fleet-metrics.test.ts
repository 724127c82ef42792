import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { JobProducer } from '@benchfleet/queue';
import {
  enqueueTestRun,
  startCli,
  useTestServices,
  waitFor,
  waitForWorkerReady,
  type StartedProcess,
} from '@benchfleet/testing';
import { demoCatalogRequest, importWebshopCatalog } from '@benchfleet/webshop-benchmark';

const EPISODES = 60;
const WORKER_IDS = ['fleet-a', 'fleet-b', 'fleet-c'] as const;

const services = useTestServices();
let producer: JobProducer;
const fleet: Array<{ id: string; port: number; child: StartedProcess }> = [];

interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** Prometheus text exposition format: `name{label="value",…} number` lines, comments skipped. */
function parseExposition(text: string): Sample[] {
  const samples: Sample[] = [];
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const match = /^([A-Za-z_:][A-Za-z0-9_:]*)(?:\{(.*)\})?\s+(\S+)$/.exec(line);
    if (!match) throw new Error(`not a Prometheus sample line: ${line}`);
    const labels: Record<string, string> = {};
    for (const pair of (match[2] ?? '').matchAll(/([A-Za-z_][A-Za-z0-9_]*)="((?:[^"\\]|\\.)*)"/g))
      labels[pair[1]!] = pair[2]!;
    samples.push({ name: match[1]!, labels, value: Number(match[3]) });
  }
  return samples;
}

function total(samples: Sample[], name: string, labels: Record<string, string> = {}): number {
  return samples
    .filter(
      (sample) =>
        sample.name === name &&
        Object.entries(labels).every(([key, value]) => sample.labels[key] === value),
    )
    .reduce((sum, sample) => sum + sample.value, 0);
}

async function scrape(port: number): Promise<Sample[]> {
  const response = await fetch(`http://127.0.0.1:${port}/metrics`);
  expect(response.status).toBe(200);
  return parseExposition(await response.text());
}

async function healthStatus(port: number): Promise<number | undefined> {
  return fetch(`http://127.0.0.1:${port}/healthz`).then(
    (response) => response.status,
    () => undefined,
  );
}

beforeAll(async () => {
  producer = new JobProducer(services.redisUrl, services.prefix);
  await importWebshopCatalog(services.db, demoCatalogRequest({ seed: 0, products: 300 }));
});

afterAll(async () => {
  for (const worker of fleet)
    if (worker.child.child.exitCode === null) worker.child.child.kill('SIGKILL');
  await producer.close();
});

describe('a fleet of three worker-webshop processes', () => {
  it('spreads a run over all three, and their /metrics add up to what Postgres recorded', async () => {
    for (const id of WORKER_IDS) {
      const child = startCli(
        'worker-webshop',
        ['--worker-id', id, '--concurrency', '2', '--metrics-port', '0'],
        { ...services.env, LOG_LEVEL: 'info' },
      );
      fleet.push({ id, port: 0, child });
    }
    // The metrics server starts once the catalog is indexed; the ready line names the port it got.
    for (const worker of fleet) {
      const { metricsPort } = await waitForWorkerReady(worker.child);
      worker.port = metricsPort ?? 0;
      expect(await healthStatus(worker.port)).toBe(200);
    }

    const runId = await enqueueTestRun(
      { db: services.db, producer },
      { benchmark: 'webshop', maxTasks: EPISODES, flags: { split: 'test', agent: 'rule' } },
    );
    const tasks = await waitFor(
      `run ${runId} to settle`,
      async () => {
        const rows = await services.db
          .selectFrom('tasks')
          .selectAll()
          .where('run_id', '=', runId)
          .execute();
        return rows.length === EPISODES &&
          rows.every((task) => task.status !== 'queued' && task.status !== 'running')
          ? rows
          : undefined;
      },
      600_000,
      200,
    );

    const tasksByWorker = new Map<string, number>();
    for (const task of tasks)
      tasksByWorker.set(
        String(task.worker_id),
        (tasksByWorker.get(String(task.worker_id)) ?? 0) + 1,
      );
    expect(new Set(tasksByWorker.keys())).toEqual(new Set(WORKER_IDS));

    // A job's counter moves just after its outcome is committed: wait until the scrapes catch up.
    const episodeJob = { queue: 'webshop', job: 'webshop-episode' };
    const scrapes = await waitFor(
      'the workers to count every episode',
      async () => {
        const all = await Promise.all(fleet.map((worker) => scrape(worker.port)));
        return all.reduce(
          (sum, samples) => sum + total(samples, 'benchfleet_jobs_completed_total', episodeJob),
          0,
        ) === EPISODES
          ? all
          : undefined;
      },
      600_000,
      100,
    );
    const everything = scrapes.flat();

    // Per worker: its completed-jobs counter is the number of tasks Postgres credits to it.
    fleet.forEach((worker, index) => {
      const own = scrapes[index]!;
      expect(own.every((sample) => sample.labels.worker === worker.id)).toBe(true);
      expect(total(own, 'benchfleet_jobs_completed_total', episodeJob)).toBe(
        tasksByWorker.get(worker.id),
      );
    });
    expect(total(everything, 'benchfleet_jobs_completed_total', episodeJob)).toBe(EPISODES);
    expect(total(everything, 'benchfleet_jobs_failed_total', episodeJob)).toBe(0);

    const statusCounts = await services.db
      .selectFrom('tasks')
      .select(['status', (eb) => eb.fn.countAll<string>().as('n')])
      .where('run_id', '=', runId)
      .groupBy('status')
      .execute();
    const outcomeStatuses = new Set(
      everything
        .filter((sample) => sample.name === 'benchfleet_task_outcomes_total')
        .map((sample) => sample.labels.status),
    );
    expect(outcomeStatuses).toEqual(new Set(statusCounts.map((row) => row.status)));
    for (const row of statusCounts) {
      expect(
        total(everything, 'benchfleet_task_outcomes_total', {
          queue: 'webshop',
          status: row.status,
        }),
        `status ${row.status}`,
      ).toBe(Number(row.n));
    }
    expect(total(everything, 'benchfleet_steps_total', { queue: 'webshop' })).toBe(
      tasks.reduce((sum, task) => sum + task.total_steps, 0),
    );
    expect(total(everything, 'benchfleet_steps_total')).toBeGreaterThan(0);

    // The scaling signal a Prometheus-driven autoscaler would read: the queue is empty. The gauge
    // is refreshed while a scrape is served, so it is read from the second scrape on.
    for (const worker of fleet) {
      await scrape(worker.port);
      const samples = await scrape(worker.port);
      for (const state of ['wait', 'active']) {
        const depth = samples.filter(
          (sample) =>
            sample.name === 'benchfleet_queue_jobs' &&
            sample.labels.queue === 'webshop' &&
            sample.labels.state === state,
        );
        expect(
          depth.map((sample) => sample.value),
          `${worker.id} ${state}`,
        ).toEqual([0]);
      }
    }

    for (const worker of fleet) expect(await healthStatus(worker.port)).toBe(200);
    for (const worker of fleet) {
      worker.child.child.kill('SIGTERM');
      expect((await worker.child.exited).code).toBe(0);
    }
  });
});
