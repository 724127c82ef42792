import { type Logger } from '@benchfleet/core';
import type { PostgresHealthProbe, TasksRepository } from '@benchfleet/db';
import { allHealthy, type HealthCheck, type HealthReport } from '@benchfleet/queue';
import { lostOutcomesMessage, restoreLedgerRuns, type OutcomeLedger } from '../outcome-ledger.js';
import type { PendingAttemptRecords } from './attempt-records.js';
import type { WorkerProcessSettings } from './worker-process.js';

function report(problem: string | null): HealthReport {
  return problem === null ? { ok: true } : { ok: false, reason: problem };
}

/**
 * What the worker needs up to take jobs: Postgres (a write, through the probe), its artifact store
 * when it has one, and what its benchmark needs besides (e.g. its Bytebot stack).
 */
export function workerHealthCheck(
  probe: PostgresHealthProbe,
  artifactStore: WorkerProcessSettings['artifactStore'],
  workerId: string,
  timeoutMs: number,
  benchmarkCheck: HealthCheck | undefined,
): HealthCheck {
  return allHealthy([
    async () => report(await probe.problem()),
    ...(artifactStore
      ? [async () => report(await artifactStore.healthProblem(workerId, timeoutMs))]
      : []),
    ...(benchmarkCheck ? [benchmarkCheck] : []),
  ]);
}

/**
 * After an outage, before the next job is taken: what Postgres did not take is written, and
 * outcomes a failover lost (the Postgres that came back may be a promoted replica without some of
 * what it acknowledged) restored from the outcome ledger.
 */
export function recoverAfterOutage(
  records: PendingAttemptRecords,
  tasks: TasksRepository,
  ledger: OutcomeLedger,
  logger: Logger,
  workerId: string,
): () => Promise<void> {
  return async () => {
    const left = await records.flush();
    if (left > 0) throw new Error(`${left} kept attempt record(s) still not written`);
    const restored = await restoreLedgerRuns(tasks, ledger, ledger.recentRuns());
    if (restored.restored > 0)
      logger.warn({ ...restored, worker: workerId }, lostOutcomesMessage(restored.restored));
  };
}
