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

/**
 * Sessions of a host inside a transaction (what they hold, nobody else can take): state and statement.
 * A session still logging in is not one: its state is `starting`, and it has `xact_start` because
 * Postgres reads its catalogs in a transaction while it waits for the client's SCRAM reply, which the
 * cut drops (measured: one connection opened in the instant of the cut). It ran no statement of ours,
 * holds no row, and Postgres ends it after `authentication_timeout`.
 */
async function transactionsOf(fleet: FaultFleet, address: string): Promise<string[]> {
  const rows = await sql<{ state: string | null; query: string }>`
    select state, query from pg_stat_activity
    where client_addr = ${address}::inet and xact_start is not null
      and state is distinct from 'starting'`.execute(fleet.db);
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
        600_000,
        20,
      );
      const cutAtDatabase = await fleet.databaseNow();
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
          LOST_WORKER_BOUND_MS + 600_000,
          100,
        );
        takeoverSeconds = await fleet.secondsToTakeover(
          runId,
          heldAtCut,
          'webshop-a',
          cutAtDatabase,
        );
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
          // A bound that only catches a hang: when it paused is the log line's own time.
          600_000,
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

/** How long the silent Redis cut lasts: long enough for TCP's retransmission back-off to grow. */
const SILENT_REDIS_CUT_MS = 90_000;

/**
 * A worker on a host of its own whose traffic with Redis alone is dropped, silently (Postgres still
 * answers), for `SILENT_REDIS_CUT_MS`, then given back. Once the cut heals, the worker must take a
 * job again within seconds: the event measured is its first attempt of a run enqueued at the heal
 * (the other worker stopped before, so only it can take them). The field saw 99-112 s: a connection
 * that stays "ready" through the cut resends its unanswered commands only when TCP's retransmission
 * timer (doubling to 2 min) next fires. `droppedConnections` is the worker's log line saying it made
 * its connections afresh when Redis stopped answering on one it believed up.
 */
export async function silentRedisCutHeals(): Promise<FaultResult> {
  const network = await TestNetwork.create();
  try {
    return await withFaultFleet({ network, productionLocks: true }, async (fleet) => {
      const host = await network.addHost('workera');
      await fleet.startKeeper();
      const [workerA, workerB] = await Promise.all([
        fleet.startWebshopWorker('webshop-a', 8, {}, host),
        fleet.startWebshopWorker('webshop-b', 8),
      ]);
      const runId = await fleet.enqueueWebshop('0-159');
      await waitFor(
        'the worker on its own host to run episodes',
        async () =>
          (await runningOn(fleet, runId, 'webshop-a')).length > 0 &&
          (await fleet.taskCounts(runId)).settled >= 20,
        120_000,
        20,
      );
      const redis = new URL(fleet.redis.url);
      await host.dropTcpWith(redis.hostname, Number(redis.port));
      const cutAt = Date.now();
      let pausedAfterS = Number.NaN;
      try {
        await waitForOutput(workerA, /"msg":"paused: Redis/, 'the cut worker to pause', 600_000);
        pausedAfterS = (Date.now() - cutAt) / 1000;
      } catch {
        // It did not notice: NaN says so.
      }
      await new Promise((resolve) =>
        setTimeout(resolve, Math.max(0, SILENT_REDIS_CUT_MS - (Date.now() - cutAt))),
      );
      workerB.child.kill('SIGTERM');
      await workerB.exited;
      await host.stopDroppingTcpWith(redis.hostname, Number(redis.port));
      const healedAt = Date.now();
      const nextRun = await fleet.enqueueWebshop('160-179');
      let rejoinedAfterS = Number.NaN;
      try {
        // A bound that only catches a hang: the field's 112 s, and more.
        await waitFor(
          'the healed worker to take a job again',
          async () =>
            (await fleet.db
              .selectFrom('attempts')
              .select('task_id')
              .where('run_id', '=', nextRun)
              .where('worker_id', '=', 'webshop-a')
              .executeTakeFirst()) !== undefined,
          240_000,
          100,
        );
        rejoinedAfterS = (Date.now() - healedAt) / 1000;
      } catch {
        // Never: NaN says so.
      }
      const output = workerA.output();
      const result = await finishFault(
        fleet,
        'Redis silently cut off from one worker, healed',
        runId,
      );
      let nextRunByTheHealedWorker = 'never';
      try {
        await fleet.converge(nextRun, 120_000);
        const rows = await fleet.db
          .selectFrom('tasks')
          .select(['status', 'worker_id'])
          .where('run_id', '=', nextRun)
          .execute();
        const byA = rows.filter(
          (t) => (t.status === 'success' || t.status === 'failed') && t.worker_id === 'webshop-a',
        );
        nextRunByTheHealedWorker = `${byA.length}/${rows.length}`;
      } catch {
        // Not within the time allowed: 'never'.
      }
      return {
        ...result,
        checks: {
          ...result.checks,
          pausedAfterS,
          rejoinedAfterS,
          droppedConnections: /made its Redis connections afresh/.test(output),
          resumed: output.includes('health check passed: resuming'),
          nextRunByTheHealedWorker,
          cutWorkerAlive: workerA.child.exitCode === null && workerA.child.signalCode === null,
        },
      };
    });
  } finally {
    await network.destroy();
  }
}
