import type { AnyBenchmark } from '@benchfleet/benchmark-kit';
import type { RunSummaryRow } from '@benchfleet/db';
import {
  AGGREGATE_QUEUE,
  maxmemoryPolicyOf,
  servingWorkers,
  type JobProducer,
  type WorkerBeat,
} from '@benchfleet/queue';
import type { RunLimits } from './run-limits.js';

// The notes `scheduler status` prints under a run: what holds it up, and what to do about it.

/** An amount in dollars, to the cent, or to the micro-dollar below $1. */
export function dollars(usd: number): string {
  return `$${usd < 1 ? usd.toFixed(6) : usd.toFixed(2)}`;
}

/**
 * What holds the run up, in one line each: its halt, a Redis that may evict queue keys, and while
 * tasks are left, no worker (or a paused one), tasks without a job, no `scheduler worker`.
 */
export async function statusNotes(
  producer: JobProducer,
  benchmark: AnyBenchmark,
  facts: {
    run: RunSummaryRow;
    limits: RunLimits;
    workers: WorkerBeat[];
    pending: number;
    jobless: number;
  },
): Promise<string[]> {
  const { run, limits, workers, pending, jobless } = facts;
  const notes: string[] = [];
  // Said whether or not tasks are left: a run its spend limit stopped says so once finished too.
  if (run.halt !== null) notes.push(haltNote(run, limits));
  // Workers refuse to start on such a Redis; this is one that changed under a running fleet.
  const policy = maxmemoryPolicyOf(await producer.connection.info('memory'));
  if (policy !== undefined && policy !== 'noeviction')
    notes.push(
      `Redis maxmemory-policy is ${policy}: it may evict queue keys (a job left in no state never runs); set maxmemory-policy noeviction`,
    );
  if (pending === 0) return notes;
  if (servingWorkers(workers, benchmark.job.queue).length === 0)
    notes.push(
      `no worker is consuming queue ${benchmark.job.queue}: start one, e.g. \`${benchmark.display.workerCommand}\``,
    );
  for (const beat of workers.filter((w) => w.state === 'paused'))
    notes.push(
      `worker ${beat.workerId} is paused since ${beat.since}: ${beat.reason ?? 'no reason given'}`,
    );
  if (jobless > 0) {
    notes.push(
      `${jobless} open task(s) have no job that will run them (Redis lost them, or they failed out): \`scheduler worker\` re-enqueues them, or run \`scheduler resume ${run.run_id}\``,
    );
  }
  if (!workers.some((beat) => beat.queue === AGGREGATE_QUEUE)) {
    notes.push(
      'no `scheduler worker` runs: what a fault leaves behind (lost jobs, a Redis that lost its data) is not repaired until one does',
    );
  }
  return notes;
}

/**
 * Why the run takes no new task. A spend-limit stop names the limit only: the reason stored at the
 * fence carries what the governor had counted then, a second spend figure beside the spend line.
 */
function haltNote(run: RunSummaryRow, limits: RunLimits): string {
  if (run.halt === 'budget' && limits.max_cost_usd !== undefined)
    return `the run reached its spend limit of ${dollars(limits.max_cost_usd)}: no new task starts, and its open tasks end with budget`;
  return run.halt_reason ?? `the run is halted (${run.halt}): no new task is taken`;
}
