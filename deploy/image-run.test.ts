import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { freePort } from '@benchfleet/local-services';
import { JobProducer } from '@benchfleet/queue';
import {
  buildProjectImage,
  ensureDockerEngine,
  docker,
  enqueueTestRun,
  inspect,
  osworldTestTask,
  startFakeBytebot,
  TestContainers,
  useTestServices,
  waitFor,
  withFakeScenario,
  writeOsworldTestDataset,
  type FakeBytebot,
} from '@benchfleet/testing';
import { ConfigMap } from 'kubernetes-models/v1/ConfigMap';
import { k8sObject, readK8sManifests } from './k8s-manifests.js';

// deploy/Dockerfile built for real (classic builder, cached) and every app run from the one image,
// each container on the host's network against this file's Postgres and Redis: the image's
// entrypoint, its user, its HEALTHCHECK (run every second here instead of every 30 s) and what each
// app does, not the Dockerfile's text.

// Where no Docker engine can be had (not root, none answering) these tests skip, saying why.
const engine = await ensureDockerEngine();
if (!engine.available)
  console.warn(`${import.meta.url.replace(/^.*\/deploy\//, 'deploy/')}: skipped: ${engine.reason}`);

const services = useTestServices();
const containers = new TestContainers();
let image: string;
let producer: JobProducer;
let scratchDir: string;
let bytebot: FakeBytebot | undefined;

beforeAll(async () => {
  if (!engine.available) return;
  image = await buildProjectImage((line) => console.info(line));
  producer = new JobProducer(services.redisUrl, services.prefix);
  scratchDir = await mkdtemp(path.join(tmpdir(), 'benchfleet-image-run-'));
}, 30 * 60_000);

afterAll(async () => {
  await containers.removeAll();
  await bytebot?.close();
  await producer?.close();
  if (scratchDir) await rm(scratchDir, { recursive: true, force: true });
});

function serviceEnv(databaseUrl = services.databaseUrl): string[] {
  return [
    ...['-e', `DATABASE_URL=${databaseUrl}`, '-e', `REDIS_URL=${services.redisUrl}`],
    ...['-e', `BENCHFLEET_QUEUE_PREFIX=${services.prefix}`, '-e', 'LOG_LEVEL=warn'],
  ];
}

/** A command of the image to completion, as `docker run --rm IMAGE …`. */
function runOnce(args: string[], databaseUrl?: string) {
  return docker(['run', '--rm', '--network', 'host', ...serviceEnv(databaseUrl), image, ...args], {
    timeoutMs: 5 * 60_000,
  });
}

/** What deploy/k8s gives every container beyond its services: the ConfigMap's cache paths. */
function k8sCaches(): string[] {
  const config = k8sObject(readK8sManifests(), ConfigMap, 'benchfleet-config').data ?? {};
  return Object.entries(config)
    .filter(([name]) => name.endsWith('_CACHE'))
    .map(([name, value]) => `${name}=${value}`);
}

/**
 * A long-running app of the image, its HEALTHCHECK every second; `podLike`: as Kubernetes runs it
 * (a read-only root filesystem, /tmp a volume of its own, the ConfigMap's cache paths).
 */
function startApp(suffix: string, env: string[], args: string[], podLike = false): Promise<string> {
  const pod = podLike
    ? ['--read-only', '--tmpfs', '/tmp', ...k8sCaches().flatMap((pair) => ['-e', pair])]
    : [];
  return containers.run(suffix, [
    ...pod,
    ...['--network', 'host', '--health-interval', '1s', '--health-start-period', '0s'],
    ...serviceEnv(),
    ...env.flatMap((pair) => ['-e', pair]),
    image,
    ...args,
  ]);
}

const health = (container: string) => inspect(container, '{{.State.Health.Status}}');

async function waitHealthy(container: string): Promise<void> {
  await waitFor(
    `${container} to be healthy`,
    async () => {
      const status = await health(container);
      if (status === 'unhealthy' || (await inspect(container, '{{.State.Running}}')) !== 'true')
        throw new Error(
          `${container} is ${status}: ${(await docker(['logs', '--tail', '20', container])).stderr}`,
        );
      return status === 'healthy';
    },
    180_000,
    500,
  );
}

async function settled(runId: string): Promise<boolean> {
  const open = await services.db
    .selectFrom('tasks')
    .select('task_id')
    .where('run_id', '=', runId)
    .where('status', 'in', ['queued', 'running'])
    .executeTakeFirst();
  return open === undefined;
}

describe.skipIf(!engine.available)('the project image', () => {
  it('scheduler migrate makes the schema in an empty database, then is a no-op', async () => {
    const admin = new pg.Client({ connectionString: inject('adminDatabaseUrl') });
    await admin.connect();
    const name = `benchfleet_image_migrate_${process.pid}`;
    await admin.query(`create database ${name}`);
    try {
      const url = new URL(inject('adminDatabaseUrl'));
      url.pathname = `/${name}`;
      const first = await runOnce(['scheduler', 'migrate'], url.toString());
      expect(first.stderr + first.stdout).toMatch(/applied \d+ migration\(s\): \d+_core_tables/);
      expect(first.code).toBe(0);
      const again = await runOnce(['scheduler', 'migrate'], url.toString());
      expect(again.code).toBe(0);
      expect(again.stderr + again.stdout).not.toMatch(/applied/);
    } finally {
      await admin.query(`drop database if exists ${name} with (force)`);
      await admin.end();
    }
  });

  it('worker-webshop and the keeper from the image, as Kubernetes runs them (read-only root), run a WebShop run to its summary, healthy, and stop cleanly on SIGTERM', async () => {
    const imported = await runOnce(['scheduler', 'webshop', 'import', '--demo']);
    expect(imported.code, imported.stderr).toBe(0);
    const enqueued = await runOnce([
      ...['scheduler', 'enqueue', '--benchmark', 'webshop', '--catalog', 'demo'],
      ...['--goals', '0-39', '--agent', 'rule', '--json'],
    ]);
    expect(enqueued.code, enqueued.stderr).toBe(0);
    const { runId } = JSON.parse(enqueued.stdout) as { runId: string };

    const worker = await startApp(
      'webshop',
      [`BENCHFLEET_METRICS_PORT=${await freePort()}`, 'BENCHFLEET_WORKER_ID=image-webshop'],
      ['worker-webshop', '--concurrency', '8'],
      true,
    );
    const keeper = await startApp(
      'keeper',
      [`BENCHFLEET_METRICS_PORT=${await freePort()}`],
      ['scheduler', 'worker'],
      true,
    );
    await waitFor(`run ${runId} to settle`, () => settled(runId), 300_000, 250);
    await waitHealthy(worker);
    await waitHealthy(keeper);

    const tasks = await services.db
      .selectFrom('tasks')
      .select(['status', 'worker_id'])
      .where('run_id', '=', runId)
      .execute();
    expect(tasks).toHaveLength(40);
    for (const task of tasks) {
      expect(['success', 'failed']).toContain(task.status);
      expect(task.worker_id).toBe('image-webshop');
    }
    // The worker that settled the last task (or the keeper) writes the summary.
    const run = await waitFor(
      'the run summary',
      () =>
        services.db
          .selectFrom('runs')
          .select(['status', 'summary'])
          .where('id', '=', runId)
          .where('summary', 'is not', null)
          .executeTakeFirst(),
      60_000,
      250,
    );
    expect(run.status).toBe('finished');

    // The app is PID 1: docker stop's SIGTERM reaches it and it exits 0, well before the kill.
    const stopped = await docker(['stop', '-t', '120', worker]);
    expect(stopped.code).toBe(0);
    expect(await inspect(worker, '{{.State.ExitCode}}')).toBe('0');
  }, 600_000);

  it('worker-osworld from the image runs a task on its Bytebot stack, healthy', async () => {
    bytebot = await startFakeBytebot({
      pendingDelayMs: 10,
      stepIntervalMs: 50,
      scenarios: { short: { steps: 2, ending: { kind: 'completed', answer: 'Done.' } } },
    });
    const datasetPath = await writeOsworldTestDataset(scratchDir, 'image', [
      osworldTestTask('image-task-1', withFakeScenario('A task for the image', 'short')),
    ]);
    const runId = await enqueueTestRun(
      { db: services.db, producer },
      { benchmark: 'osworld', runName: 'image', flags: { dataset: datasetPath } },
    );
    const worker = await startApp(
      'osworld',
      [`BENCHFLEET_METRICS_PORT=${await freePort()}`],
      ['worker-osworld', '--bytebot-url', bytebot.url, '--stack-id', 'image-stack-1'],
    );
    await waitFor(`run ${runId} to settle`, () => settled(runId), 300_000, 250);
    await waitHealthy(worker);
    const task = await services.db
      .selectFrom('tasks')
      .select(['status', 'worker_id', 'total_steps'])
      .where('run_id', '=', runId)
      .executeTakeFirstOrThrow();
    expect(task).toEqual({ status: 'success', worker_id: 'image-stack-1', total_steps: 3 });
    expect(bytebot.stats.createdTasks).toBe(1);
  }, 600_000);

  it('the dashboard from the image serves its page and its API, healthy', async () => {
    const port = await freePort();
    const dashboard = await startApp('dashboard', [`DASHBOARD_PORT=${port}`], ['dashboard']);
    await waitHealthy(dashboard);
    const page = await fetch(`http://127.0.0.1:${port}/`, { signal: AbortSignal.timeout(10_000) });
    expect(page.status).toBe(200);
    expect(await page.text()).toMatch(/<script[^>]+src="\/assets\//);
    const api = await fetch(`http://127.0.0.1:${port}/api/health`, {
      signal: AbortSignal.timeout(10_000),
    });
    expect(await api.json()).toEqual({ database: 'up', redis: 'up' });
  });
});
