import type { Command } from 'commander';
import { hostname } from 'node:os';

export function registerWorker(program: Command): void {
  program
    .command('worker')
    .description('serve the aggregate queue: summarise each run when its last task settles; give an outcome to tasks whose jobs BullMQ failed as lost')
    .option('--worker-id <id>', 'identity of this worker', `aggregate-${hostname()}-${process.pid}`)
    .option('--grace-s <n>', 'seconds active jobs may finish after SIGTERM', Number, 30)
    .option('--metrics-port <port>', 'serve /metrics and /healthz on this port (or BENCHFLEET_METRICS_PORT)')
    .action(async (flags: { workerId: string; graceS: number; metricsPort?: string }) => {
      const [{ tasksRepository }, { aggregateJobId, JobProducer, startWorkerProcess, watchLostJobs }, { loadSchedulerConfig }, { createAggregateRunHandler }] = await Promise.all([
        import('@benchfleet/db'),
        import('@benchfleet/queue'),
        import('../config.js'),
        import('../handlers/aggregate-run.js'),
      ]);
      const config = await loadSchedulerConfig({ database: true, redis: true });
      const metricsPort = flags.metricsPort ?? process.env.BENCHFLEET_METRICS_PORT;
      const running = await startWorkerProcess(
        {
          app: 'scheduler-worker',
          queue: 'aggregate',
          databaseUrl: config.databaseUrl,
          redisUrl: config.redisUrl,
          prefix: config.prefix,
          concurrency: 4,
          workerId: flags.workerId,
          graceMs: flags.graceS * 1000,
          logLevel: config.logLevel,
          ...(metricsPort ? { metricsPort: Number(metricsPort) } : {}),
        },
        async ({ db }) => ({ 'aggregate-run': createAggregateRunHandler(db) }),
      );
      const { logger } = running;
      const producer = new JobProducer(config.redisUrl, config.prefix);
      const tasks = tasksRepository(running.db);
      const watcher = await watchLostJobs({
        redisUrl: config.redisUrl,
        prefix: config.prefix,
        queues: ['osworld', 'webshop'],
        logger,
        onLost: async (lost) => {
          const { recorded, runSettled } = await tasks.failLost(lost.runId, lost.taskId, lost.reason);
          logger.warn({ run: lost.runId, task: lost.taskId, recorded, reason: lost.reason }, 'task job lost: recorded as an infrastructure error');
          if (runSettled) await producer.enqueue('aggregate-run', { payload: { runId: lost.runId }, jobId: aggregateJobId(lost.runId) });
        },
      });
      await running.finished;
      await watcher.close();
      await producer.close();
    });
}
