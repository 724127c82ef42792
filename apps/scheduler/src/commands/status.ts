import type { Command } from 'commander';
import type { Database, RunSummaryRow } from '@benchfleet/db';
import type { JobProducer, QueueName } from '@benchfleet/queue';

export interface RunStatus {
  run: RunSummaryRow;
  done: number;
  pending: number;
  etaSeconds: number | null;
  queue: Record<string, number>;
}

// Modules are imported when a function runs, so that registering the command loads none of them.
async function latestRunId(db: Database): Promise<string> {
  const [{ runsRepository }, { UsageError }] = await Promise.all([import('@benchfleet/db'), import('@benchfleet/core')]);
  const [latest] = await runsRepository(db).list(1);
  if (!latest) throw new UsageError('no runs yet: start one with `scheduler enqueue`');
  return latest.run_id;
}

export async function readRunStatus(db: Database, producer: JobProducer, runId: string): Promise<RunStatus> {
  const [{ runsRepository }, { UsageError }, { jobCatalog }] = await Promise.all([import('@benchfleet/db'), import('@benchfleet/core'), import('@benchfleet/queue')]);
  const run = await runsRepository(db).summary(runId);
  if (!run) throw new UsageError(`run ${runId} not found; \`scheduler runs\` lists the runs`);
  const done = run.total - run.queued - run.running;
  const queueName: QueueName = run.benchmark === 'osworld' ? jobCatalog['osworld-task'].queue : jobCatalog['webshop-episode'].queue;
  const queue = await producer.counts(queueName);
  const runRow = await runsRepository(db).get(runId);
  const startedAt = runRow?.started_at?.getTime();
  let etaSeconds: number | null = null;
  if (startedAt && done > 0 && done < run.total) {
    const rate = done / ((Date.now() - startedAt) / 1000);
    etaSeconds = Math.round((run.total - done) / rate);
  }
  return { run, done, pending: run.total - done, etaSeconds, queue };
}

export function registerStatus(program: Command): void {
  program
    .command('status [run]')
    .description('progress of a run (default: the latest): a live bar on a terminal, a snapshot with --json')
    .option('--json', 'print one JSON snapshot and exit')
    .option('--follow', 'keep reporting until the run has no pending task (default on a terminal)')
    .action(async (runArg: string | undefined, flags: { json?: boolean; follow?: boolean }) => {
      const { withSchedulerServices } = await import('../config.js');
      await withSchedulerServices({ redis: true }, async ({ config, db, producer }) => {
        const runId = runArg ?? (await latestRunId(db));
        const first = await readRunStatus(db, producer, runId);
        const follow = !flags.json && (flags.follow ?? process.stderr.isTTY === true);
        if (!follow) {
          if (flags.json) process.stdout.write(`${JSON.stringify(first)}\n`);
          else process.stdout.write(describeStatus(first));
          return;
        }
        await followRun(db, producer, config.redisUrl, config.prefix, first);
        process.stdout.write(describeStatus(await readRunStatus(db, producer, runId)));
      });
    });
}

export function describeStatus(status: RunStatus): string {
  const r = status.run;
  return (
    `${r.run_id} ${r.name} (${r.benchmark}, ${r.run_status}): ${status.done}/${r.total} done, ` +
    `${r.queued} queued, ${r.running} running, ${r.succeeded} success, ${r.failed} failed, ${r.cancelled} cancelled, ${r.errors} errors` +
    (r.avg_reward !== null && r.benchmark === 'webshop' ? `, mean reward ${r.avg_reward}` : '') +
    (status.etaSeconds !== null ? `, eta ${status.etaSeconds}s` : '') +
    '\n'
  );
}

/** Refreshes from Postgres whenever QueueEvents reports a finished job, and every 2 s regardless. */
export async function followRun(db: Database, producer: JobProducer, redisUrl: string, prefix: string, first: RunStatus): Promise<void> {
  const [{ QueueEvents }, { createRedisConnection }, { createProgressReporter }] = await Promise.all([
    import('bullmq'),
    import('@benchfleet/queue'),
    import('../progress-reporter.js'),
  ]);
  const runId = first.run.run_id;
  const queueName = first.run.benchmark === 'osworld' ? 'osworld' : 'webshop';
  const connection = createRedisConnection(redisUrl, 'worker');
  const events = new QueueEvents(queueName, { connection, prefix });
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
      latest = await readRunStatus(db, producer, runId);
      progress.update(latest.done, { running: latest.run.running, success: latest.run.succeeded });
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
