import { ScaledObject } from '@kubernetes-models/keda/keda.sh/v1alpha1/ScaledObject';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDatabase, WORKER_LOST_ERROR, type Database } from '@benchfleet/db';
import { createRedisConnection } from '@benchfleet/queue';
import {
  buildProjectImage,
  ensureDockerEngine,
  ComposeProject,
  docker,
  dockerOk,
  ensureLocalImages,
  inspect,
  runCli,
  startFakeLlm,
  useTestServices,
  waitFor,
  type FakeLlm,
} from '@benchfleet/testing';
import { k8sObject, readK8sManifests } from './k8s-manifests.js';

// deploy/compose.yaml brought up for real with Debian's docker-compose 1.29 (or the compose plugin):
// Postgres, Redis, migrate, the keeper, two WebShop workers and the dashboard, each in its own
// container on the project's user-defined bridge network, as the README's container section runs
// them. Then: the README's demo run inside equals the same run outside; a worker container killed
// mid-run loses nothing; one partitioned from the network and given back loses nothing and leaves
// no false cause; KEDA's scale signal, computed from the real ScaledObject over this Redis, follows
// the queue down. The cut lasts BENCHFLEET_PARTITION_S seconds (25 here; bench/README: 60).

// Where no Docker engine can be had (not root, none answering) these tests skip, saying why.
const engine = await ensureDockerEngine();
if (!engine.available)
  console.warn(`${import.meta.url.replace(/^.*\/deploy\//, 'deploy/')}: skipped: ${engine.reason}`);

const services = useTestServices();
const PARTITION_S = Number(process.env.BENCHFLEET_PARTITION_S ?? 25);
let compose: ComposeProject;
let db: Database;
let llm: FakeLlm;

beforeAll(async () => {
  if (!engine.available) return;
  const image = await buildProjectImage((line) => console.info(line));
  await ensureLocalImages(['postgres', 'redis'], { log: (line) => console.info(line) });
  compose = new ComposeProject(`benchfleetct${process.pid}`, image);
  await compose.composeOk(['up', '-d', '--no-build'], 600_000);
  db = createDatabase(await compose.databaseUrl(), { max: 4 });
  for (const worker of await compose.containers('worker-webshop')) await healthy(worker);
  // The agents' fake LLM listens where the containers reach the host: the bridge's gateway.
  const gateway = await dockerOk([
    ...['network', 'inspect', compose.network],
    ...['-f', '{{(index .IPAM.Config 0).Gateway}}'],
  ]);
  llm = await startFakeLlm({ host: gateway, latencyMs: 400 });
  const imported = await compose.cli(['scheduler', 'webshop', 'import', '--demo']);
  expect(imported.code, imported.stderr).toBe(0);
}, 30 * 60_000);

afterAll(async () => {
  await db?.destroy();
  await llm?.close();
  await compose?.down();
});

async function healthy(container: string): Promise<void> {
  await waitFor(
    `${container} to be healthy`,
    async () => (await inspect(container, '{{.State.Health.Status}}')) === 'healthy',
    300_000,
    1_000,
  );
}

async function enqueue(args: string[]): Promise<string> {
  const result = await compose.cli([
    'scheduler',
    'enqueue',
    '--benchmark',
    'webshop',
    '--json',
    ...args,
  ]);
  expect(result.code, result.stderr).toBe(0);
  return (JSON.parse(result.stdout) as { runId: string }).runId;
}

/** A run of the fake LLM's agent: three calls of 400 ms an episode, so that faults land mid-run. */
const llmRun = (goals: string) =>
  enqueue([
    '--catalog',
    'demo',
    '--goals',
    goals,
    '--agent',
    'llm',
    '--llm-base-url',
    llm.baseUrl,
    '--llm-model',
    'fake-model',
  ]);

async function counts(database: Database, runId: string) {
  const row = await sql<{ open: number; settled: number }>`
    select count(*) filter (where status in ('queued', 'running'))::int as open,
           count(*) filter (where status not in ('queued', 'running'))::int as settled
    from tasks where run_id = ${runId}`.execute(database);
  return row.rows[0]!;
}

async function summarised(database: Database, runId: string) {
  return waitFor(
    `run ${runId} to be summarised`,
    () =>
      database
        .selectFrom('runs')
        .select(['status', 'summary'])
        .where('id', '=', runId)
        .where('summary', 'is not', null)
        .executeTakeFirst(),
    600_000,
    500,
  );
}

/** Lost, twice, stuck, as the fault suite counts them. */
async function verdict(runId: string) {
  const tasks = await db
    .selectFrom('tasks')
    .select(['status'])
    .where('run_id', '=', runId)
    .execute();
  const twice = await sql<{ n: number }>`
    select count(*)::int as n from (select task_id from attempts
      where run_id = ${runId} and status in ('success', 'failed')
      group by task_id having count(*) > 1) t`.execute(db);
  return {
    tasks: tasks.length,
    stuck: tasks.filter((t) => t.status === 'queued' || t.status === 'running').length,
    lost: tasks.filter((t) => t.status === 'error').length,
    twice: twice.rows[0]!.n,
  };
}

/** The worker id a container's worker-webshop takes: kind, hostname (the container's id), pid 1. */
async function workerIdOf(container: string): Promise<string> {
  return `webshop-${await inspect(container, '{{.Config.Hostname}}')}-1`;
}

/** What the comparison keeps of a summary: every number but times and the run's id. */
function comparable(summary: unknown): unknown {
  const { run_id, started_at, finished_at, total_duration_seconds, ...rest } = summary as Record<
    string,
    unknown
  >;
  void [run_id, started_at, finished_at, total_duration_seconds];
  const { avg_duration_seconds, longest_task, ...numbers } = rest.summary as Record<
    string,
    unknown
  >;
  void [avg_duration_seconds, longest_task];
  return { ...rest, summary: numbers };
}

describe.skipIf(!engine.available)('deploy/compose.yaml, up for real', () => {
  it('runs the fleet in containers on the project network; the dashboard answers from the host with its token', async () => {
    const running = await compose.composeOk(['ps', '--services', '--filter', 'status=running']);
    expect(running.split('\n').sort()).toEqual(
      ['dashboard', 'postgres', 'redis', 'scheduler', 'worker-webshop'].sort(),
    );
    expect(await compose.containers('worker-webshop')).toHaveLength(2);
    expect(await inspect(compose.network, '{{.Driver}}')).toBe('bridge');
    const dashboard = `http://${await compose.published('dashboard', 8080)}`;
    await healthy((await compose.containers('dashboard'))[0]!);
    const refused = await fetch(`${dashboard}/api/health`, { signal: AbortSignal.timeout(10_000) });
    expect(refused.status).toBe(401);
    const health = await fetch(`${dashboard}/api/health`, {
      headers: { authorization: `Bearer ${compose.secrets.dashboard_token}` },
      signal: AbortSignal.timeout(10_000),
    });
    expect(await health.json()).toEqual({ database: 'up', redis: 'up' });
  }, 600_000);

  it("the README's demo run inside compose has the summary of the same run outside", async () => {
    const inside = await enqueue([
      ...['--catalog', 'demo', '--split', 'test', '--agent', 'rule'],
      ...['--max-tasks', '100', '--run-name', 'demo-webshop-rule'],
    ]);
    const demo = await runCli('scheduler', ['demo'], services.env, 600_000);
    expect(demo.code, demo.stderr).toBe(0);
    const outsideId = /run (run-\S+): 100 episodes enqueued/.exec(demo.stdout + demo.stderr)?.[1];
    const outside = await summarised(services.db, outsideId!);
    const insideRun = await summarised(db, inside);
    expect(insideRun.status).toBe('finished');
    expect(comparable(insideRun.summary)).toEqual(comparable(outside.summary));
    const episodes = async (database: Database, runId: string) =>
      database
        .selectFrom('tasks')
        .select(['task_id', 'status', 'reward', 'total_steps'])
        .where('run_id', '=', runId)
        .orderBy('task_id')
        .execute();
    expect(await episodes(db, inside)).toEqual(await episodes(services.db, outsideId!));
  }, 900_000);

  it('a worker container killed mid-run loses nothing; KEDA’s signal follows the queue down to 0', async () => {
    const scaledObject = k8sObject(readK8sManifests(), ScaledObject, 'worker-webshop');
    const redis = createRedisConnection(
      `redis://${await compose.published('redis', 6379)}`,
      'producer',
    );
    const signal: number[] = [];
    let sampling = true;
    // What KEDA's redis scaler and the HPA compute: LLEN of each trigger's list over its
    // listLength, rounded up, the largest of them; none above activationListLength: zero.
    const sample = async () => {
      while (sampling) {
        const wanted = await Promise.all(
          scaledObject.spec.triggers.map(async (trigger) => {
            const length = await redis.llen(String(trigger.metadata.listName));
            const active = length > Number(trigger.metadata.activationListLength ?? 0);
            return { active, replicas: Math.ceil(length / Number(trigger.metadata.listLength)) };
          }),
        );
        const replicas = wanted.some((w) => w.active)
          ? Math.max(...wanted.map((w) => w.replicas))
          : 0;
        signal.push(Math.min(replicas, scaledObject.spec.maxReplicaCount ?? 100));
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
    };
    const [victim, survivor] = await compose.containers('worker-webshop');
    const victimId = await workerIdOf(victim!);
    const runId = await llmRun('0-299');
    const sampler = sample();
    try {
      await waitFor(
        `the victim to be mid-run`,
        async () =>
          (await counts(db, runId)).settled >= 60 &&
          (await db
            .selectFrom('tasks')
            .select('task_id')
            .where('run_id', '=', runId)
            .where('status', '=', 'running')
            .where('worker_id', '=', victimId)
            .executeTakeFirst()) !== undefined,
        300_000,
        100,
      );
      await dockerOk(['kill', '-s', 'KILL', victim!]);
      await summarised(db, runId);
      // A job the killed worker held can reach the list again after its task settled elsewhere
      // (the stall check hands it back); the signal follows the lists until they are empty.
      await waitFor(`KEDA's signal at 0`, async () => signal.at(-1) === 0, 300_000, 200);
    } finally {
      sampling = false;
      await sampler;
      redis.disconnect();
    }
    expect(await verdict(runId)).toEqual({ tasks: 300, stuck: 0, lost: 0, twice: 0 });
    // The attempts it held say what happened to them: their worker was lost, and it was.
    const victimAttempts = await db
      .selectFrom('attempts')
      .select(['status', 'error'])
      .where('run_id', '=', runId)
      .where('worker_id', '=', victimId)
      .execute();
    expect(victimAttempts.filter((a) => a.error === WORKER_LOST_ERROR).length).toBeGreaterThan(0);
    const survivorLost = await db
      .selectFrom('attempts')
      .select('task_id')
      .where('run_id', '=', runId)
      .where('worker_id', '=', await workerIdOf(survivor!))
      .where('error', '=', WORKER_LOST_ERROR)
      .execute();
    expect(survivorLost).toEqual([]);
    // 300 jobs: ceil(236 / 64) = 4 pods wanted at first, then fewer as the lists drain, then 0.
    console.info(`KEDA's replicas for worker-webshop, every 200 ms: ${signal.join(' ')}`);
    expect(Math.max(...signal)).toBeGreaterThanOrEqual(3);
    expect(signal.at(-1)).toBe(0);
    const peak = signal.indexOf(Math.max(...signal));
    expect(new Set(signal.slice(peak)).size).toBeGreaterThanOrEqual(3);
    // The killed container comes back (restart: unless-stopped) or stays down: either way the run is whole.
  }, 900_000);

  it(`a worker container cut off the network for ${PARTITION_S} s and given back: 0 lost, 0 twice, every cause true`, async () => {
    const workers = await compose.containers('worker-webshop');
    for (const worker of workers)
      if ((await inspect(worker, '{{.State.Running}}')) !== 'true')
        await dockerOk(['start', worker]);
    for (const worker of workers) await healthy(worker);
    const [cut, other] = workers;
    const cutId = await workerIdOf(cut!);
    const runId = await llmRun('300-497');
    await waitFor(
      'the worker to be cut to hold episodes',
      async () =>
        (await db
          .selectFrom('tasks')
          .select('task_id')
          .where('run_id', '=', runId)
          .where('status', '=', 'running')
          .where('worker_id', '=', cutId)
          .executeTakeFirst()) !== undefined,
      300_000,
      100,
    );
    await dockerOk(['network', 'disconnect', compose.network, cut!]);
    try {
      await new Promise((resolve) => setTimeout(resolve, PARTITION_S * 1000));
    } finally {
      await docker(['network', 'connect', '--alias', 'worker-webshop', compose.network, cut!]);
    }
    await summarised(db, runId);
    expect(await verdict(runId)).toEqual({ tasks: 198, stuck: 0, lost: 0, twice: 0 });
    // Nobody died: once back, the cut-off worker writes the real cause of every attempt it could
    // not finish over the presumption of a lost worker the takeover wrote.
    const presumedLost = () =>
      db
        .selectFrom('attempts')
        .select(['task_id', 'worker_id'])
        .where('run_id', '=', runId)
        .where('error', '=', WORKER_LOST_ERROR)
        .execute();
    await waitFor(
      'no attempt to say its worker was lost',
      async () => (await presumedLost()).length === 0,
      300_000,
      1_000,
    );
    const cutAttempts = await db
      .selectFrom('attempts')
      .select(['status', 'error_class', 'error'])
      .where('run_id', '=', runId)
      .where('worker_id', '=', cutId)
      .execute();
    const unfinished = cutAttempts.filter((a) => a.status !== 'success' && a.status !== 'failed');
    console.info(
      `cut-off worker: ${cutAttempts.length} attempts, ${unfinished.length} unfinished: ${[...new Set(unfinished.map((a) => a.error))].join(' | ')}`,
    );
    for (const attempt of unfinished)
      expect(attempt).toMatchObject({
        status: 'error',
        error_class: 'infra',
        error: expect.any(String),
      });
    // It rejoined: healthy again, and it settled tasks of the run after the cut.
    await healthy(cut!);
    expect(other).toBeDefined();
  }, 900_000);
});
