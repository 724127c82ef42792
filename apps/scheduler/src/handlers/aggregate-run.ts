import type { BenchmarkRegistry } from '@benchfleet/benchmark-kit';
import type { Database } from '@benchfleet/db';
import type { JobHandler } from '@benchfleet/queue';
import { aggregateRun } from '@benchfleet/runs';

/** The `aggregate-run` job: recomputes the summary from the rows, so running it twice is harmless. */
export function createAggregateRunHandler(
  db: Database,
  registry: BenchmarkRegistry,
): JobHandler<{ runId: string }> {
  return async ({ payload, logger }) => {
    const summary = await aggregateRun(db, registry, payload.runId);
    logger.info(
      {
        total: summary.summary.total_tasks,
        pending: summary.pending,
        success_rate: summary.summary.success_rate,
      },
      'run summarised',
    );
    return { total: summary.summary.total_tasks, pending: summary.pending };
  };
}
