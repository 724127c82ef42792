import { aggregateJobId, aggregateRunJob, type JobProducer } from '@benchfleet/queue';

/**
 * Asks the fleet keeper for a run's summary: one aggregate job per run at a time (its job id is
 * the run's), so asking twice while one waits asks once.
 */
export async function requestRunAggregate(producer: JobProducer, runId: string): Promise<void> {
  await producer.enqueue(aggregateRunJob, { payload: { runId }, jobId: aggregateJobId(runId) });
}
