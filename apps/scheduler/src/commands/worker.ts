import type { Command } from 'commander';
import { hostname } from 'node:os';
import type { BenchmarkRegistry } from '@benchfleet/benchmark-kit';
import { tasksRepository } from '@benchfleet/db';
import { parseConfig } from '@benchfleet/core';
import {
  AGGREGATE_QUEUE,
  aggregateJobId,
  aggregateRunJob,
  JobProducer,
  serve,
  startWorkerProcess,
  watchLostJobs,
  WORKER_CONFIG_LABELS,
  workerConfigInput,
  workerConfigShape,
  workerProcessSettings,
  type WorkerFlags,
} from '@benchfleet/queue';
import { z } from 'zod';
import { createAggregateRunHandler } from '../handlers/aggregate-run.js';

export function registerWorker(program: Command, registry: BenchmarkRegistry): void {
  program
    .command('worker')
    .description('serve the aggregate queue: summarise each run when its last task settles; give an outcome to tasks whose jobs BullMQ failed as lost')
    .option('--worker-id <id>', 'identity of this worker (default aggregate-<hostname>-<pid>, or BENCHFLEET_WORKER_ID)')
    .option('--grace-s <n>', 'seconds active jobs may finish after SIGTERM (default 30)')
    .option('--metrics-port <port>', 'serve /metrics and /healthz on this port, 0 for any free one (or BENCHFLEET_METRICS_PORT)')
    .option('--metrics-host <host>', 'address /metrics and /healthz listen on (default 127.0.0.1; or BENCHFLEET_METRICS_HOST)')
    .action(async (flags: WorkerFlags) => {
      const config = parseConfig(
        z.object(workerConfigShape),
        workerConfigInput(flags, process.env, { workerId: `aggregate-${hostname()}-${process.pid}`, graceS: 30 }),
        WORKER_CONFIG_LABELS,
      );
      const running = await startWorkerProcess(
        { app: 'scheduler-worker', queue: AGGREGATE_QUEUE, ...workerProcessSettings(config), concurrency: 4 },
        async ({ db }) => [serve(aggregateRunJob, createAggregateRunHandler(db, registry))],
      );
      const { logger } = running;
      const producer = new JobProducer(config.redisUrl, config.prefix, 'worker');
      const tasks = tasksRepository(running.db);
      const watcher = await watchLostJobs({
        redisUrl: config.redisUrl,
        prefix: config.prefix,
        queues: registry.taskQueues,
        logger,
        onLost: async (lost) => {
          const { recorded, runSettled } = await tasks.failLost(lost.runId, lost.taskId, lost.reason);
          logger.warn({ run: lost.runId, task: lost.taskId, recorded, reason: lost.reason }, 'task job lost: recorded as an infrastructure error');
          if (runSettled) await producer.enqueue(aggregateRunJob, { payload: { runId: lost.runId }, jobId: aggregateJobId(lost.runId) });
        },
      });
      await running.finished;
      await watcher.close();
      await producer.close();
    });
}
