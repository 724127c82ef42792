// A worker process for the runtime's tests: serves the test job's queue with a handler that records a
// step every 100 ms for JOB_MS and then succeeds. Started by src/worker/worker-runtime.test.ts with tsx.
// LOCK_MS: its job locks' duration (default the product's, whose lapse after a kill the tests wait for).
import { createLogger } from '@benchfleet/core';
import { createDatabase, StepWriter, StepsRepository } from '@benchfleet/db';
import { serve, startWorkerRuntime } from '@benchfleet/queue';
import { createTaskJobHandler } from '../src/worker/task-processor.js';
import { runtimeTestJob } from './runtime-test-job.js';

const env = process.env;
const db = createDatabase(env.DATABASE_URL ?? '');
const steps = new StepWriter(new StepsRepository(db));
const jobMs = Number(env.JOB_MS ?? '1000');
const logger = createLogger({ level: env.LOG_LEVEL ?? 'warn', name: 'test-worker' });

const episode = createTaskJobHandler(
  { db, steps, onRunSettled: async () => undefined },
  async ({ signal, recordStep }) => {
    let step = 0;
    for (const end = Date.now() + jobMs; Date.now() < end;) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      signal.throwIfAborted();
      step += 1;
      recordStep({ step, action: JSON.stringify({ tick: step }), text: `tick ${step}` });
    }
    return { status: 'success', totalSteps: step, reward: 1, success: true };
  },
);

const runtime = await startWorkerRuntime({
  queue: runtimeTestJob(env).queue,
  jobs: [serve(runtimeTestJob(env), episode)],
  redisUrl: env.REDIS_URL ?? '',
  prefix: env.BENCHFLEET_QUEUE_PREFIX ?? '{bf}',
  concurrency: 1,
  workerId: env.WORKER_ID ?? 'test-worker',
  logger,
  graceMs: Number(env.GRACE_MS ?? '5000'),
  // The product's lock and stall check unless a test sets them: a lock of 1 s lapsed on a live
  // worker starved of CPU (load 40 on 2 cores), and its job ran twice.
  ...(env.LOCK_MS ? { lockDurationMs: Number(env.LOCK_MS) } : {}),
  maxStalledCount: Number(env.MAX_STALLED ?? '3'),
});

for (const signalName of ['SIGTERM', 'SIGINT'] as const) {
  process.once(signalName, () => {
    void runtime.shutdown().then(async () => {
      await steps.flush().catch(() => undefined);
      await db.destroy();
      process.exit(0);
    });
  });
}
process.stdout.write('ready\n');
