import { UsageError } from '@benchfleet/core';
import type { BenchmarkRegistry } from '@benchfleet/benchmark-kit';
import { RunsRepository, TasksRepository, type Database } from '@benchfleet/db';
import { taskJobId, type JobProducer } from '@benchfleet/queue';
import { aggregateRun } from './run-aggregate.js';

export interface CancelReport {
  cancelled: number;
  removedJobs: number;
  alreadyCancelled: boolean;
}

/**
 * Cancels a run: rows first, in one transaction (the run, its open tasks and running attempts; from
 * then on nothing is written for it), then its waiting jobs go, all at once, and its active ones are
 * told to stop. A finished run is refused; cancelling a cancelled run again changes nothing.
 */
export async function cancelRun(
  db: Database,
  producer: JobProducer,
  registry: BenchmarkRegistry,
  runId: string,
): Promise<CancelReport> {
  const run = await new RunsRepository(db).get(runId);
  if (!run) throw new UsageError(`run ${runId} not found; \`scheduler runs\` lists the runs`);
  const benchmark = registry.get(run.benchmark);
  const open = await new TasksRepository(db).openTaskIds(runId);
  const { outcome, tasks } = await new RunsRepository(db).cancel(runId);
  if (outcome === 'finished')
    throw new UsageError(`run ${runId} has finished: there is nothing to cancel`);
  const removedJobs = await producer.removeJobs(
    benchmark.job.queue,
    open.map((taskId) => taskJobId(runId, taskId)),
  );
  await producer.publishCancel(runId);
  if (outcome === 'cancelled') await aggregateRun(db, registry, runId);
  return { cancelled: tasks, removedJobs, alreadyCancelled: outcome === 'already_cancelled' };
}
