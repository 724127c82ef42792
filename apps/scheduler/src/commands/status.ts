import { createProgressReporter } from '@benchfleet/core';
import type { Command } from 'commander';
import { QueueEvents } from 'bullmq';
import type { BenchmarkRegistry } from '@benchfleet/benchmark-kit';
import type { Database } from '@benchfleet/db';
import { LlmGovernor } from '@benchfleet/llm-governor';
import { createRedisConnection, type JobProducer } from '@benchfleet/queue';
import { describeStatus, latestRunId, readRunStatus, type RunStatus } from '@benchfleet/runs';
import { withSchedulerServices } from '../config.js';

export function configureStatus(command: Command, registry: BenchmarkRegistry): void {
  command
    .option('--json', 'print one JSON snapshot and exit')
    .option('--follow', 'keep reporting until the run has no pending task (default on a terminal)')
    .action(async (runArg: string | undefined, flags: { json?: boolean; follow?: boolean }) => {
      // It runs on a Redis that evicts keys, to warn of it.
      await withSchedulerServices(
        { redis: true, evictingRedis: true, schema: registry.migrations },
        async ({ config, db, producer }) => {
          // Only read: the LLM lanes and the run's live spend, as the workers' governors keep them in Redis.
          const governor = new LlmGovernor({ redisUrl: config.redisUrl, prefix: config.prefix });
          try {
            const runId = runArg ?? (await latestRunId(db));
            const first = await readRunStatus(db, producer, registry, runId, { governor });
            const follow = !flags.json && (flags.follow ?? process.stderr.isTTY === true);
            if (!follow) {
              if (flags.json) process.stdout.write(`${JSON.stringify(first)}\n`);
              else process.stdout.write(describeStatus(first));
              return;
            }
            await followRun(db, producer, registry, config.redisUrl, config.prefix, first);
            process.stdout.write(
              describeStatus(await readRunStatus(db, producer, registry, runId, { governor })),
            );
          } finally {
            await governor.close();
          }
        },
      );
    });
}

/** Refreshes from Postgres whenever QueueEvents reports a finished job, and every 2 s regardless. */
export async function followRun(
  db: Database,
  producer: JobProducer,
  registry: BenchmarkRegistry,
  redisUrl: string,
  prefix: string,
  first: RunStatus,
): Promise<void> {
  const runId = first.run.run_id;
  const connection = createRedisConnection(redisUrl, 'worker');
  const events = new QueueEvents(first.queueName, { connection, prefix });
  events.on('error', () => undefined);
  const progress = createProgressReporter(runId, first.run.total, {
    format: `${first.run.name} [{bar}] {value}/{total} | running {running} | success {success} | eta {eta_formatted}`,
  });
  let refreshing = false;
  let latest = first;
  const refresh = async () => {
    if (refreshing) return;
    refreshing = true;
    try {
      latest = await readRunStatus(db, producer, registry, runId, { quick: true });
      progress.update(latest.done, {
        running: latest.run.running - latest.retrying.length,
        success: latest.run.succeeded,
      });
    } finally {
      refreshing = false;
    }
  };
  events.on('completed', () => void refresh());
  events.on('failed', () => void refresh());
  try {
    await refresh();
    while (latest.pending > 0) {
      await new Promise((resolve) => setTimeout(resolve, 2_000));
      await refresh();
    }
  } finally {
    progress.stop();
    // Its blocking read would otherwise hold close() for up to its block timeout.
    connection.disconnect();
    await events.close();
  }
}
