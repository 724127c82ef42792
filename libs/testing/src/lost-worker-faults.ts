import { sql } from 'kysely';
import { LOST_WORKER_BOUND_MS } from '@benchfleet/queue';
import type { FaultFleet } from './fault-fleet.js';
import { finishFault, withFaultFleet, type FaultResult } from './fault-scenarios.js';
import { waitFor } from './process-harness.js';

/** Tasks of a run with an attempt opened by `workerId`, whatever became of it. */
async function tasksAttemptedBy(
  fleet: FaultFleet,
  runId: string,
  workerId: string,
): Promise<number> {
  const row = await sql<{ n: number }>`
    select count(distinct task_id)::int as n from attempts
    where run_id = ${runId} and worker_id = ${workerId}`.execute(fleet.db);
  return row.rows[0]?.n ?? 0;
}

/**
 * A worker killed with SIGKILL right after it took every job, on the workers' own lock settings
 * (not the suite's fast ones): how long until another worker has taken each of them.
 *
 * The kill comes before the dead worker's first lock renewal, and the other worker starts after it,
 * so the time measured is the whole lock duration plus at most one stalled interval: with BullMQ's
 * defaults (30 s + 30 s) never less than 30 s, with ours at most `LOST_WORKER_BOUND_MS`.
 */
export function killedWorkerNoticed(): Promise<FaultResult> {
  return withFaultFleet({ productionLocks: true }, async (fleet) => {
    await fleet.startKeeper();
    const doomed = await fleet.startWebshopWorker('webshop-doomed', 4);
    // Its episodes wait at their first LLM call, so none ends before the kill.
    fleet.llm.hold();
    const runId = await fleet.enqueueWebshop('0-3');
    await waitFor(
      'the doomed worker to run all 4 episodes',
      async () =>
        (await tasksAttemptedBy(fleet, runId, 'webshop-doomed')) === 4 && fleet.llm.held() >= 4,
      60_000,
      20,
    );
    doomed.child.kill('SIGKILL');
    await doomed.exited;
    const killedAt = Date.now();
    fleet.llm.release();
    await fleet.startWebshopWorker('webshop-rescuer', 4);
    let takeoverSeconds = Number.NaN;
    try {
      await waitFor(
        "another worker to take each of the dead worker's jobs",
        async () => (await tasksAttemptedBy(fleet, runId, 'webshop-rescuer')) === 4,
        LOST_WORKER_BOUND_MS + 60_000,
        100,
      );
      takeoverSeconds = (Date.now() - killedAt) / 1000;
    } catch {
      // Not within the time allowed: the result says NaN.
    }
    const waited = (Date.now() - killedAt) / 1000;
    const result = await finishFault(fleet, 'kill -9 a worker (own lock settings)', runId, {
      takeoverSeconds,
      boundSeconds: LOST_WORKER_BOUND_MS / 1000,
    });
    // Converged counts from the kill: the wait for the takeover is part of it.
    return { ...result, seconds: result.seconds + waited };
  });
}
