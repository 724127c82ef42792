import type { BenchmarkRegistry } from '@benchfleet/benchmark-kit';
import { runsRepository, tasksRepository, type Database } from '@benchfleet/db';
import { taskJobId, type JobProducer } from '@benchfleet/queue';
import { aggregateRun } from './run-summary.js';

export interface CancelReport {
  cancelled: number;
  removedJobs: number;
}

/**
 * Cancels a run: rows first (a worker finishing now finds its task cancelled and records nothing
 * over it), then its waiting jobs go and its active ones are told to stop.
 */
export async function cancelRun(db: Database, producer: JobProducer, registry: BenchmarkRegistry, runId: string): Promise<CancelReport> {
  const run = await runsRepository(db).get(runId);
  if (!run) throw new Error(`run ${runId} not found`);
  const benchmark = registry.get(run.benchmark);
  const tasks = await tasksRepository(db).listByRun(runId);
  const open = tasks.filter((task) => task.status === 'queued' || task.status === 'running');
  await runsRepository(db).markCancelled(runId);
  const cancelled = await tasksRepository(db).cancelPending(runId);
  const removedJobs = await producer.removeJobs(
    benchmark.job.queue,
    open.map((task) => taskJobId(runId, task.task_id)),
  );
  await producer.publishCancel(runId);
  await aggregateRun(db, registry, runId);
  return { cancelled, removedJobs };
}
