import { causeOf, RepeatedLog, type Logger } from '@benchfleet/core';
import type { BenchmarkRegistry } from '@benchfleet/benchmark-kit';
import { RunsRepository, TasksRepository, type Database } from '@benchfleet/db';
import { taskJobId, type JobProducer } from '@benchfleet/queue';
import { ensureJobs } from './run-enqueuer.js';
import { aggregateRun } from './run-aggregate.js';
import { lostOutcomesMessage, OutcomeLedger, restoreLedgerRuns } from './outcome-ledger.js';

// BullMQ fails these jobs in Redis itself (their workers kept dying): the task's attempt is lost.
const LOST_REASONS = /stalled more than allowable limit|started more than allowable limit/;
const ALIVE_STATES = new Set(['waiting', 'delayed', 'prioritized', 'waiting-children', 'active']);
const PAGE = 500;

/** An open task (queued or running in Postgres) whose job in Redis will not run it. */
export interface JoblessTask {
  taskId: string;
  status: 'queued' | 'running';
  /** `missing` (Redis lost it), `completed` or `failed` (with BullMQ's reason). */
  jobState: string;
  failedReason?: string;
}

/** The open tasks of a run that no live job (waiting, delayed, active) will run. */
export async function joblessTasks(
  db: Database,
  producer: JobProducer,
  queueName: string,
  runId: string,
): Promise<JoblessTask[]> {
  const open = await new TasksRepository(db).openTasks(runId);
  const queue = producer.queue(queueName);
  const jobless: JoblessTask[] = [];
  for (let i = 0; i < open.length; i += PAGE) {
    const page = open.slice(i, i + PAGE);
    const states = await Promise.all(
      page.map((task) => queue.getJobState(taskJobId(runId, task.task_id))),
    );
    for (const [index, task] of page.entries()) {
      const state = states[index] ?? 'unknown';
      if (ALIVE_STATES.has(state)) continue;
      const entry: JoblessTask = {
        taskId: task.task_id,
        status: task.status,
        jobState: state === 'unknown' ? 'missing' : state,
      };
      if (state === 'failed')
        entry.failedReason =
          (await queue.getJob(taskJobId(runId, task.task_id)))?.failedReason ?? '';
      jobless.push(entry);
    }
  }
  return jobless;
}

interface ReconcileReport {
  /** Runs whose open tasks were compared with their queue. */
  runsChecked: number;
  /** Tasks given a new job (their job was missing, completed or failed out). */
  requeued: number;
  /** Running tasks whose job BullMQ failed as lost: recorded as an infrastructure error. */
  lost: number;
  /** Outcomes Postgres had acknowledged and lost (a failover), restored from the outcome ledger. */
  restored: number;
  /** Runs with every task settled that got their summary. */
  summarised: string[];
}

/**
 * Makes Redis and the run summaries converge to Postgres, the source of truth: every open task of
 * a run that is going gets a job if it has none that will run it (Redis lost its data, a job failed
 * out while Postgres was down); a running task whose job BullMQ failed as lost gets its outcome;
 * a run whose tasks have all settled gets its summary. Idempotent, and safe on several hosts at
 * once: jobs have deterministic ids, outcomes are conditional writes, summaries are recomputed.
 * Runs younger than `graceMs` are left to their enqueue (its jobs may still be on their way).
 */
async function reconcileRuns(
  deps: { db: Database; producer: JobProducer; registry: BenchmarkRegistry; logger: Logger },
  options: { graceMs?: number } = {},
): Promise<ReconcileReport> {
  const report: ReconcileReport = {
    runsChecked: 0,
    requeued: 0,
    lost: 0,
    restored: 0,
    summarised: [],
  };
  const tasks = new TasksRepository(deps.db);
  const runs = await new RunsRepository(deps.db).goingOn(options.graceMs ?? 30_000);
  // First the outcomes a failover lost: their tasks look open, but they ran and must not run again.
  const ledger = new OutcomeLedger(deps.producer.connection, deps.producer.prefix);
  const restored = await restoreLedgerRuns(
    tasks,
    ledger,
    runs.filter((run) => run.open > 0 && deps.registry.find(run.benchmark)).map((run) => run.id),
  );
  report.restored = restored.restored;
  if (restored.restored > 0) deps.logger.warn(restored, lostOutcomesMessage(restored.restored));
  for (const run of runs) {
    const benchmark = deps.registry.find(run.benchmark);
    if (!benchmark) continue; // another fleet's benchmark: its own scheduler reconciles it
    report.runsChecked += 1;
    // A run paused on infra errors keeps its open tasks jobless until `scheduler resume`.
    if (run.open > 0 && run.halt !== 'infra') {
      const jobless = await joblessTasks(deps.db, deps.producer, benchmark.job.queue, run.id);
      const toRequeue: string[] = [];
      let lost = 0;
      for (const task of jobless) {
        if (
          task.status === 'running' &&
          task.jobState === 'failed' &&
          LOST_REASONS.test(task.failedReason ?? '')
        ) {
          if ((await tasks.failLost(run.id, task.taskId, `lost: ${task.failedReason}`)).recorded)
            lost += 1;
        } else {
          toRequeue.push(task.taskId);
        }
      }
      report.lost += lost;
      if (lost > 0)
        deps.logger.warn(
          { run: run.id, lost },
          'tasks whose jobs BullMQ failed as lost got their outcome',
        );
      if (toRequeue.length > 0) {
        const requeued = await ensureJobs(deps.producer, benchmark, run.id, toRequeue);
        report.requeued += requeued.requeued.length;
        if (requeued.requeued.length > 0)
          deps.logger.warn(
            {
              run: run.id,
              tasks: requeued.requeued.length,
              replaced: requeued.replaced.length,
              sample: requeued.requeued.slice(0, 5),
            },
            `open tasks had no job that would run them: re-enqueued (${requeued.replaced.length} replacing a finished job or a record left in no state)`,
          );
      }
    }
    const stillOpen = await tasks.openTaskIds(run.id);
    if (stillOpen.length === 0) {
      await aggregateRun(deps.db, deps.registry, run.id);
      report.summarised.push(run.id);
      deps.logger.info({ run: run.id }, 'run settled without a summary: summarised');
    }
  }
  return report;
}

/** Runs `reconcileRuns` now and every `intervalMs` until stopped; a failed round is logged and the next one tries again. */
export function startReconciler(
  deps: { db: Database; producer: JobProducer; registry: BenchmarkRegistry; logger: Logger },
  options: { intervalMs: number; graceMs?: number },
): { stop(): Promise<void> } {
  let stopped = false;
  let round: Promise<void> = Promise.resolve();
  let timer: NodeJS.Timeout | undefined;
  // A round a second fails alike through a whole outage: said once per interval, with a count.
  const repeated = new RepeatedLog(deps.logger);
  const tick = () => {
    round = reconcileRuns(deps, options.graceMs !== undefined ? { graceMs: options.graceMs } : {})
      .then((report) => {
        if (report.requeued || report.lost || report.restored || report.summarised.length)
          deps.logger.info(report, 'reconciled the queues with Postgres');
      })
      .catch((error: unknown) =>
        repeated.warn(
          `reconcile:${causeOf(error)}`,
          { err: error },
          'reconciling failed; trying again at the next round',
        ),
      )
      .finally(() => {
        if (!stopped) timer = setTimeout(tick, options.intervalMs);
      });
  };
  tick();
  return {
    async stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      await round;
      repeated.flush();
    },
  };
}
