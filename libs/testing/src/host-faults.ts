import { sql } from 'kysely';
import { LOST_WORKER_BOUND_MS } from '@benchfleet/queue';
import type { FaultFleet } from './fault-fleet.js';
import { finishFault, withFaultFleet, type FaultResult } from './fault-scenarios.js';
import { waitFor, waitForOutput } from './process-harness.js';
import { TestNetwork } from './test-network.js';

/** How a worker host is cut off: its link taken down, or every packet it sends dropped. */
export type HostCut = 'link-down' | 'packets-dropped';

async function runningOn(fleet: FaultFleet, runId: string, workerId: string): Promise<string[]> {
  const rows = await fleet.db
    .selectFrom('tasks')
    .select('task_id')
    .where('run_id', '=', runId)
    .where('status', '=', 'running')
    .where('worker_id', '=', workerId)
    .execute();
  return rows.map((row) => row.task_id);
}

/** Sessions of a host inside a transaction (what they hold, nobody else can take): state and statement. */
async function transactionsOf(fleet: FaultFleet, address: string): Promise<string[]> {
  const rows = await sql<{ state: string | null; query: string }>`
    select state, query from pg_stat_activity
    where client_addr = ${address}::inet and xact_start is not null`.execute(fleet.db);
  return rows.rows.map(
    (row) => `${row.state ?? '?'}: ${row.query.replace(/\s+/g, ' ').slice(0, 80)}`,
  );
}

/** Active BullMQ jobs whose processor is `workerId` (BullMQ records the worker's name on each). */
async function activeJobsOf(fleet: FaultFleet, workerId: string): Promise<number> {
  const { Queue } = await import('bullmq');
  const { createRedisConnection } = await import('@benchfleet/queue');
  const connection = createRedisConnection(fleet.redis.url, 'producer');
  const queue = new Queue('webshop', { connection, prefix: fleet.prefix });
  try {
    const active = await queue.getJobs(['active']);
    return active.filter((job) => job.processedBy === workerId).length;
  } finally {
    await queue.close();
    connection.disconnect();
  }
}

/**
 * Postgres and Redis on a host of their own, two WebShop workers on two others, the keeper and the
 * test on the bridge between them (network namespaces and veth pairs the test makes and removes).
 * Mid-run one worker host is cut off, its link taken down or its packets dropped, and stays cut
 * off while the run goes on. Then: every task it held runs on the other worker within the bound
 * (`LOST_WORKER_BOUND_MS`: its job locks lapse, it cannot renew them), no Postgres session of it
 * holds a transaction, it notices and pauses (saying why), the run converges, no outcome it tries
 * to write after the others took its tasks is recorded, and once its link is back it takes and
 * finishes a next run on its own.
 */
export async function cutOffWorkerHost(cut: HostCut): Promise<FaultResult> {
  const network = await TestNetwork.create();
  try {
    return await withFaultFleet({ network, productionLocks: true }, async (fleet) => {
      const [hostA, hostB] = [await network.addHost('workera'), await network.addHost('workerb')];
      await fleet.startKeeper();
      const [workerA, workerB] = await Promise.all([
        fleet.startWebshopWorker('webshop-a', 8, {}, hostA),
        fleet.startWebshopWorker('webshop-b', 8, {}, hostB),
      ]);
      const runId = await fleet.enqueueWebshop('0-159');
      await waitFor(
        'both hosts to run episodes',
        async () =>
          (await runningOn(fleet, runId, 'webshop-a')).length > 0 &&
          (await fleet.taskCounts(runId)).settled >= 30,
        120_000,
        20,
      );
      if (cut === 'link-down') await hostA.linkDown();
      else await hostA.dropPackets();
      const cutAt = Date.now();
      const heldAtCut = await runningOn(fleet, runId, 'webshop-a');

      let takeoverSeconds = Number.NaN;
      try {
        await waitFor(
          'every task the cut-off host held to be taken by the other',
          async () =>
            (await runningOn(fleet, runId, 'webshop-a')).filter((id) => heldAtCut.includes(id))
              .length === 0,
          LOST_WORKER_BOUND_MS + 60_000,
          100,
        );
        takeoverSeconds = (Date.now() - cutAt) / 1000;
      } catch {
        // Not within the time allowed: NaN says so.
      }
      const heldAfterBound = {
        postgresTransactions: await transactionsOf(fleet, hostA.address),
        activeJobs: await activeJobsOf(fleet, 'webshop-a'),
      };
      // Cut off, it gives up: it pauses and says why (its log is a pipe to this process, not the network).
      let cutHostPaused: { seconds: number; reason: string } | null = null;
      try {
        const [line] = await waitForOutput(
          workerA,
          /^\{.*"msg":"paused: .*\}$/m,
          'the cut-off worker to pause',
          60_000 - (Date.now() - cutAt),
        );
        const logged = JSON.parse(line) as { time: number; msg: string };
        cutHostPaused = {
          seconds: (logged.time - cutAt) / 1000,
          reason: logged.msg.replace(/^paused: /, ''),
        };
      } catch {
        // It did not notice: null says so.
      }
      const waited = (Date.now() - cutAt) / 1000;
      const result = await finishFault(fleet, `a worker host cut off (${cut})`, runId);
      const staleOutcomes = await sql<{ n: number }>`
        select count(*)::int as n from attempts a
        where a.run_id = ${runId} and a.worker_id = 'webshop-a' and a.status in ('success', 'failed')
          and exists (select 1 from attempts b where b.run_id = a.run_id and b.task_id = a.task_id
                      and b.attempt > a.attempt)`.execute(fleet.db);

      // Its link back, the other worker stopped: the cut-off worker takes and finishes a next run.
      if (cut === 'link-down') await hostA.linkUp();
      else await hostA.stopDropping();
      workerB.child.kill('SIGTERM');
      await workerB.exited;
      const nextRun = await fleet.enqueueWebshop('160-179');
      let nextRunOnTheCutHost = 'never';
      try {
        await fleet.converge(nextRun, 120_000);
        const rows = await fleet.db
          .selectFrom('tasks')
          .select(['status', 'worker_id', 'error'])
          .where('run_id', '=', nextRun)
          .execute();
        // The agent's outcomes (the fake LLM's policy fails most of these goals), all by the cut-off host.
        const byA = rows.filter(
          (t) => (t.status === 'success' || t.status === 'failed') && t.worker_id === 'webshop-a',
        );
        nextRunOnTheCutHost = `${byA.length}/20`;
        const others = rows.filter((t) => !byA.includes(t));
        if (others.length)
          nextRunOnTheCutHost += `; ${others.map((t) => `${t.status}/${t.worker_id}: ${t.error ?? ''}`).join('; ')}`;
      } catch {
        // Did not rejoin in time: 'never'.
      }
      return {
        ...result,
        // Converged counts from the cut: the wait for the takeover is part of it.
        seconds: result.seconds + waited,
        checks: {
          ...result.checks,
          heldAtCut: heldAtCut.length,
          takeoverSeconds,
          boundSeconds: LOST_WORKER_BOUND_MS / 1000,
          heldAfterBound,
          cutHostPaused,
          staleOutcomesRecorded: staleOutcomes.rows[0]?.n ?? 0,
          cutHostAlive: workerA.child.exitCode === null && workerA.child.signalCode === null,
          nextRunOnTheCutHost,
        },
      };
    });
  } finally {
    await network.destroy();
  }
}
