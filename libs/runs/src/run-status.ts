import { UsageError } from '@benchfleet/core';
import type { BenchmarkRegistry } from '@benchfleet/benchmark-kit';
import { runsRepository, type Database, type RunSummaryRow } from '@benchfleet/db';
import type { JobProducer } from '@benchfleet/queue';

export interface RunStatus {
  run: RunSummaryRow;
  /** What `succeeded` counts, e.g. "agent-reported success". */
  successLabel: string;
  /** Whether the mean reward says more than the success rate (partial rewards). */
  rewardIsPartial: boolean;
  queueName: string;
  done: number;
  pending: number;
  etaSeconds: number | null;
  /** Job counts of the run's queue (all runs on it, by state). */
  queue: Record<string, number>;
}

export async function latestRunId(db: Database): Promise<string> {
  const [latest] = await runsRepository(db).list(1);
  if (!latest) throw new UsageError('no runs yet: start one with `scheduler enqueue`');
  return latest.run_id;
}

export async function readRunStatus(db: Database, producer: JobProducer, registry: BenchmarkRegistry, runId: string): Promise<RunStatus> {
  const runs = runsRepository(db);
  const run = await runs.summary(runId);
  if (!run) throw new UsageError(`run ${runId} not found; \`scheduler runs\` lists the runs`);
  const benchmark = registry.get(run.benchmark);
  const done = run.total - run.queued - run.running;
  const queue = await producer.counts(benchmark.job.queue);
  const startedAt = (await runs.get(runId))?.started_at?.getTime();
  let etaSeconds: number | null = null;
  if (startedAt && done > 0 && done < run.total) {
    const rate = done / ((Date.now() - startedAt) / 1000);
    etaSeconds = Math.round((run.total - done) / rate);
  }
  return { run, successLabel: benchmark.success.label, rewardIsPartial: benchmark.rewardIsPartial, queueName: benchmark.job.queue, done, pending: run.total - done, etaSeconds, queue };
}

/** One line: progress, counts with the success label, the mean reward where it says more than success. */
export function describeStatus(status: RunStatus): string {
  const r = status.run;
  return (
    `${r.run_id} ${r.name} (${r.benchmark}, ${r.run_status}): ${status.done}/${r.total} done, ` +
    `${r.queued} queued, ${r.running} running, ${r.succeeded} success (${status.successLabel}), ${r.failed} failed, ${r.cancelled} cancelled, ${r.errors} errors` +
    (r.avg_reward !== null && status.rewardIsPartial ? `, mean reward ${r.avg_reward}` : '') +
    (status.etaSeconds !== null ? `, eta ${status.etaSeconds}s` : '') +
    '\n'
  );
}
