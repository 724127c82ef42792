// The echo benchmark's worker app, as a test starts it: `node --import tsx echo-worker.entry.ts`.
import { createBenchmarkTaskHandler, startBenchmarkWorker } from '@benchfleet/runs';
import { echoBenchmark, runEchoEpisode } from './echo-benchmark.js';

const env = process.env;
const running = await startBenchmarkWorker(
  echoBenchmark,
  {
    app: 'worker-echo',
    databaseUrl: env.DATABASE_URL ?? '',
    redisUrl: env.REDIS_URL ?? '',
    prefix: env.BENCHFLEET_QUEUE_PREFIX ?? '{benchfleet}',
    concurrency: 4,
    workerId: env.BENCHFLEET_WORKER_ID ?? `echo-${process.pid}`,
    graceMs: 2_000,
    logLevel: env.LOG_LEVEL ?? 'info',
  },
  async ({ taskDeps }) => createBenchmarkTaskHandler(echoBenchmark, taskDeps, runEchoEpisode),
);
await running.finished;
