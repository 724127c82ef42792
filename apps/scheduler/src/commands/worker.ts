import type { Command } from 'commander';
import { hostname } from 'node:os';
import type { BenchmarkRegistry } from '@benchfleet/benchmark-kit';
import { tasksRepository } from '@benchfleet/db';
import { parseConfig } from '@benchfleet/core';
import {
  AGGREGATE_QUEUE,
  aggregateRunJob,
  JobProducer,
  serve,
  watchLostJobs,
} from '@benchfleet/queue';
import { z } from 'zod';
import {
  requestRunAggregate,
  startReconciler,
  startWorkerProcess,
  WORKER_CONFIG_LABELS,
  workerConfigInput,
  workerConfigShape,
  workerProcessSettings,
  type WorkerFlags,
} from '@benchfleet/runs';
import { createAggregateRunHandler } from '../handlers/aggregate-run.js';

export function configureWorker(command: Command, registry: BenchmarkRegistry): void {
  command
    .option(
      '--worker-id <id>',
      'identity of this worker (default aggregate-<hostname>-<pid>, or BENCHFLEET_WORKER_ID)',
    )
    .option('--grace-s <n>', 'seconds active jobs may finish after SIGTERM (default 30)')
    .option(
      '--metrics-port <port>',
      'serve /metrics and /healthz on this port, 0 for any free one (or BENCHFLEET_METRICS_PORT)',
    )
    .option(
      '--metrics-host <host>',
      'address /metrics and /healthz listen on (default 127.0.0.1; or BENCHFLEET_METRICS_HOST)',
    )
    .option(
      '--reconcile-every-s <n>',
      'seconds between reconciliations (default 30, or BENCHFLEET_RECONCILE_S)',
    )
    .option(
      '--reconcile-grace-s <n>',
      'runs younger than this are left to their enqueue (default 30)',
    )
    .action(async (flags: WorkerFlags & { reconcileEveryS?: string; reconcileGraceS?: string }) => {
      const config = parseConfig(
        z.object({
          ...workerConfigShape,
          reconcileEveryS: z.coerce
            .number({ error: 'expected a positive number of seconds' })
            .positive('expected a positive number of seconds'),
          reconcileGraceS: z.coerce
            .number({ error: 'expected a number of seconds, 0 or more' })
            .nonnegative('expected a number of seconds, 0 or more'),
        }),
        {
          ...workerConfigInput(flags, process.env, {
            workerId: `aggregate-${hostname()}-${process.pid}`,
            graceS: 30,
          }),
          reconcileEveryS: flags.reconcileEveryS ?? (process.env.BENCHFLEET_RECONCILE_S || 30),
          reconcileGraceS: flags.reconcileGraceS ?? 30,
        },
        {
          ...WORKER_CONFIG_LABELS,
          reconcileEveryS: '--reconcile-every-s (or BENCHFLEET_RECONCILE_S)',
          reconcileGraceS: '--reconcile-grace-s',
        },
      );
      const running = await startWorkerProcess(
        {
          app: 'scheduler-worker',
          queue: AGGREGATE_QUEUE,
          ...workerProcessSettings(config),
          concurrency: 4,
        },
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
          const { recorded, runSettled } = await tasks.failLost(
            lost.runId,
            lost.taskId,
            lost.reason,
          );
          logger.warn(
            { run: lost.runId, task: lost.taskId, recorded, reason: lost.reason },
            'task job lost: recorded as an infrastructure error',
          );
          if (runSettled) await requestRunAggregate(producer, lost.runId);
        },
      });
      // Postgres is the truth; whatever a fault left in Redis converges to it, round after round.
      const reconciler = startReconciler(
        { db: running.db, producer, registry, logger },
        { intervalMs: config.reconcileEveryS * 1000, graceMs: config.reconcileGraceS * 1000 },
      );
      await running.finished;
      await reconciler.stop();
      await watcher.close();
      await producer.close();
    });
}
