import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import { sql } from 'kysely';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { JobProducer, readWorkerBeats, redisTimeMs } from '@benchfleet/queue';
import {
  enqueueTestRun,
  killLeftoverProcesses,
  startCli,
  startFakeLlm,
  useTestServices,
  waitFor,
  waitForWorkerReady,
  type FakeLlm,
  type StartedProcess,
} from '@benchfleet/testing';
import { demoCatalogRequest, importWebshopCatalog } from '@benchfleet/webshop-benchmark';

// Workers whose host clock is 10 min off (a preload skews `Date.now` and `new Date()` in their
// process, as a host whose NTP failed), beside Redis and Postgres on the right time.
const SKEWED_CLOCK = fileURLToPath(
  new URL('../../../libs/testing/fixtures/skewed-clock.mjs', import.meta.url),
);
const TEN_MINUTES = 10 * 60_000;

const services = useTestServices();
let producer: JobProducer;
let redis: Redis;
let llm: FakeLlm;
const workers: StartedProcess[] = [];

beforeAll(async () => {
  producer = new JobProducer(services.redisUrl, services.prefix);
  redis = new Redis(services.redisUrl);
  llm = await startFakeLlm({ latencyMs: 5 });
  await importWebshopCatalog(services.db, demoCatalogRequest({ seed: 0, products: 400 }));
});

afterEach(async () => {
  await killLeftoverProcesses(workers);
});

afterAll(async () => {
  await producer.close();
  redis.disconnect();
  await llm.close();
});

function startWorker(id: string, skewMs: number): StartedProcess {
  const worker = startCli('worker-webshop', ['--worker-id', id, '--concurrency', '2'], {
    ...services.env,
    LOG_LEVEL: 'info',
    LLM_API_KEY: 'sk-skew-test',
    ...(skewMs !== 0 && {
      NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} --import ${SKEWED_CLOCK}`.trim(),
      BENCHFLEET_TEST_CLOCK_SKEW_MS: String(skewMs),
    }),
  });
  workers.push(worker);
  return worker;
}

/** The not-before times of the run's delayed jobs, ms since the epoch (BullMQ: score = ms × 4096 + n). */
async function delayedUntil(runId: string): Promise<number[]> {
  const scored = await redis.zrange(`${services.prefix}:webshop:delayed`, '0', '-1', 'WITHSCORES');
  const until: number[] = [];
  for (let i = 0; i + 1 < scored.length; i += 2)
    if (scored[i]!.startsWith(`${runId}__`)) until.push(Math.floor(Number(scored[i + 1]) / 4096));
  return until;
}

describe('a worker whose host clock is 10 min off', () => {
  // Once: at +10 min its retries were scheduled 10 min into the future, its tasks waited ~10 min
  // when it died and its heartbeat looked fresh for the whole skew; at -10 min its retry back-off
  // was skipped and its heartbeat looked 10 min stale while it served.
  it.each([
    ['ahead', TEN_MINUTES],
    ['behind', -TEN_MINUTES],
  ])(
    '(%s) keeps Redis time: its heartbeat is judged fresh, its retries back off from now, and once it dies another worker takes its tasks at once',
    async (_, skewMs) => {
      const runId = await enqueueTestRun(
        { db: services.db, producer },
        {
          benchmark: 'webshop',
          maxTasks: 2,
          flags: { split: 'test', agent: 'llm', llmBaseUrl: llm.baseUrl, llmModel: 'fake-model' },
        },
      );
      // Each attempt fails on the provider's first 5xx: BullMQ retries the job after its back-off.
      await services.db
        .updateTable('runs')
        .set({
          agent: sql<string>`jsonb_set(agent, '{retry}', '{"maxRetries":0,"baseDelayMs":0,"maxDelayMs":0,"maxRetryAfterMs":0}'::jsonb)`,
        })
        .where('id', '=', runId)
        .execute();
      llm.setFaults({ status500Times: 1_000_000 });
      const skewedId = `skewed-${skewMs > 0 ? 'ahead' : 'behind'}`;
      const skewed = startWorker(skewedId, skewMs);
      await waitForWorkerReady(skewed, 120_000);
      // It knows: one line says how far off its host's clock is.
      expect(skewed.output()).toMatch(/this host's clock is 6\d\d\.\d s (behind|ahead of) Redis's/);

      const beat = await waitFor(
        "the skewed worker's heartbeat to be read as live",
        async () =>
          (
            await readWorkerBeats(redis, services.prefix, async () => new Set([skewedId]), false)
          ).find((b) => b.workerId === skewedId),
        600_000,
        100,
      );
      expect(Math.abs(Date.parse(beat.at) - (await redisTimeMs(redis)))).toBeLessThan(30_000);

      // A failed attempt's retry is due after its back-off (1 s, then doubling) from Redis's now.
      const due = await waitFor(
        'a retry of a failed attempt to be scheduled',
        async () => {
          const [until] = await delayedUntil(runId);
          return until === undefined ? undefined : { until, now: await redisTimeMs(redis) };
        },
        600_000,
        20,
      );
      expect(due.until - due.now).toBeGreaterThan(-2_000);
      expect(due.until - due.now).toBeLessThan(20_000);

      // It dies with its tasks between attempts; the provider recovers; another worker, on the
      // right time, takes them: within the back-off, not the skew.
      skewed.child.kill('SIGKILL');
      await skewed.exited;
      llm.setFaults({});
      startWorker(`${skewedId}-other`, 0);
      const tasks = await waitFor(
        `run ${runId} to settle`,
        async () => {
          const rows = await services.db
            .selectFrom('tasks')
            .select(['status', 'error'])
            .where('run_id', '=', runId)
            .execute();
          return rows.every((t) => t.status !== 'queued' && t.status !== 'running')
            ? rows
            : undefined;
        },
        // Generous, to catch only a hang; the skew's 10 min is far beyond it.
        180_000,
        200,
      );
      for (const task of tasks) expect(['success', 'failed']).toContain(task.status);
    },
  );
});
