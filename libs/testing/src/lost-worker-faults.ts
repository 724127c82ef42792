import { sql } from 'kysely';
import { LOST_WORKER_BOUND_MS } from '@benchfleet/queue';
import type { FaultFleet } from './fault-fleet.js';
import { finishFault, withFaultFleet, type FaultResult } from './fault-scenarios.js';
import { waitFor } from './process-harness.js';

/** The tasks of a run with an attempt opened by `workerId`, whatever became of it. */
async function attemptedTaskIds(
  fleet: FaultFleet,
  runId: string,
  workerId: string,
): Promise<string[]> {
  const rows = await fleet.db
    .selectFrom('attempts')
    .select('task_id')
    .distinct()
    .where('run_id', '=', runId)
    .where('worker_id', '=', workerId)
    .execute();
  return rows.map((row) => row.task_id);
}

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
 * A worker killed with SIGKILL while it runs every job, on the workers' own lock settings (not the
 * suite's fast ones): how long until another worker, already serving, has taken each of them.
 *
 * The time is Postgres's, from just before the kill to the rescuer's last attempt opened, so that
 * neither a CLI's start (60-90 s at load 27) nor this process's polling counts: the dead worker's
 * locks lapse within one lock duration of its last renewal and the rescuer's next stalled check
 * takes them, so with BullMQ's defaults (30 s + 30 s) never less than 15 s, with ours at most
 * `LOST_WORKER_BOUND_MS`.
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
      600_000,
      20,
    );
    // Idle until the dead worker's jobs are back: all 4 are the doomed worker's.
    await fleet.startWebshopWorker('webshop-rescuer', 4);
    const taskIds = await attemptedTaskIds(fleet, runId, 'webshop-doomed');
    const killedAtDatabase = await fleet.databaseNow();
    doomed.child.kill('SIGKILL');
    const killedAt = Date.now();
    await doomed.exited;
    fleet.llm.release();
    let takeoverSeconds = Number.NaN;
    try {
      await waitFor(
        "another worker to take each of the dead worker's jobs",
        async () => (await tasksAttemptedBy(fleet, runId, 'webshop-rescuer')) === 4,
        LOST_WORKER_BOUND_MS + 600_000,
        100,
      );
      takeoverSeconds = await fleet.secondsToTakeover(
        runId,
        taskIds,
        'webshop-doomed',
        killedAtDatabase,
      );
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
