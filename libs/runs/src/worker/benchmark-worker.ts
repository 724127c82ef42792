import { createBenchmarkRegistry, type AnyBenchmark } from '@benchfleet/benchmark-kit';
import { serve, type JobHandler, type TaskPayload } from '@benchfleet/queue';
import { aggregateRun } from '../run-summary.js';
import {
  startWorkerProcess,
  type RunningWorker,
  type WorkerProcessSettings,
  type WorkerServices,
} from './worker-process.js';

/**
 * The process of a benchmark's worker app: its queue served with its task handler, and the runs
 * whose last task it settles summarised on the spot (the aggregate job is the fallback).
 */
export function startBenchmarkWorker(
  benchmark: AnyBenchmark,
  settings: Omit<WorkerProcessSettings, 'queue' | 'summarizeRun'>,
  buildHandler: (services: WorkerServices) => Promise<JobHandler<TaskPayload>>,
): Promise<RunningWorker> {
  const registry = createBenchmarkRegistry([benchmark]);
  return startWorkerProcess(
    {
      ...settings,
      queue: benchmark.job.queue,
      summarizeRun: async (db, runId) => {
        await aggregateRun(db, registry, runId);
      },
    },
    async (services) => [serve(benchmark.job, await buildHandler(services))],
  );
}
