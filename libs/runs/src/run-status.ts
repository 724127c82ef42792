import { UsageError } from '@benchfleet/core';
import {
  describeGraded,
  type BenchmarkRegistry,
  type GradedSummary,
} from '@benchfleet/benchmark-kit';
import { RunsRepository, TasksRepository, type Database, type RunSummaryRow } from '@benchfleet/db';
import {
  AGGREGATE_QUEUE,
  maxmemoryPolicyOf,
  readWorkerBeats,
  servingWorkers,
  taskJobId,
  type JobProducer,
  type WorkerBeat,
} from '@benchfleet/queue';
import { joblessTasks } from './run-reconciler.js';

/** A task between two attempts: its last one failed, and BullMQ runs the next after a back-off. */
export interface RetryingTask {
  taskId: string;
  failedAttempt: number;
  /** The failed attempt's error, as recorded. */
  error: string | null;
  /** The attempt BullMQ runs next, and how many it makes in all. */
  nextAttempt: number;
  maxAttempts: number;
  /** When the back-off ends (ISO); null when the job is not waiting out a delay (a worker may take it now). */
  retryAt: string | null;
}

export interface RunStatus {
  run: RunSummaryRow;
  /** What `succeeded` counts, e.g. "agent-reported success". */
  successLabel: string;
  /** Whether the mean reward says more than the success rate (partial rewards). */
  rewardIsPartial: boolean;
  queueName: string;
  done: number;
  pending: number;
  etaSeconds: number | null;
  /** Job counts of the run's queue (all runs on it, by state). */
  queue: Record<string, number>;
  /** Open tasks that no waiting, delayed or active job will run. */
  jobless: number;
  /** Tasks counted as running in `run` that are waiting to be retried, not running. */
  retrying: RetryingTask[];
  /** The workers heard from on the run's queue, and the aggregate workers. */
  workers: WorkerBeat[];
  /** What is wrong, said plainly: nobody consumes the queue, paused workers and why, lost jobs. */
  notes: string[];
  /** A graded run's grade beside the agent's word; absent for a run that is not graded. */
  graded?: GradedSummary;
}

export async function latestRunId(db: Database): Promise<string> {
  const [latest] = await new RunsRepository(db).list(1);
  if (!latest) throw new UsageError('no runs yet: start one with `scheduler enqueue`');
  return latest.run_id;
}

/**
 * Where a run stands, from Postgres, with what the fleet says of it (workers' heartbeats). `quick`
 * skips asking Redis about every open task's job (a live progress bar refreshes often).
 */
export async function readRunStatus(
  db: Database,
  producer: JobProducer,
  registry: BenchmarkRegistry,
  runId: string,
  options: { quick?: boolean } = {},
): Promise<RunStatus> {
  const runs = new RunsRepository(db);
  const run = await runs.summary(runId);
  if (!run) throw new UsageError(`run ${runId} not found; \`scheduler runs\` lists the runs`);
  const benchmark = registry.get(run.benchmark);
  const done = run.total - run.queued - run.running;
  const queue = await producer.counts(benchmark.job.queue);
  const startedAt = (await runs.get(runId))?.started_at?.getTime();
  let etaSeconds: number | null = null;
  if (startedAt && done > 0 && done < run.total) {
    const rate = done / ((Date.now() - startedAt) / 1000);
    etaSeconds = Math.round((run.total - done) / rate);
  }
  const pending = run.total - done;
  const jobless =
    pending > 0 && !options.quick
      ? (await joblessTasks(db, producer, benchmark.job.queue, runId)).length
      : 0;
  const between = run.running > 0 ? await new TasksRepository(db).betweenAttempts(runId) : [];
  const jobIds = between.map((task) => taskJobId(runId, task.task_id));
  const delayedUntil = await producer.delayedUntil(benchmark.job.queue, jobIds);
  const maxAttempts = benchmark.job.options.attempts ?? 1;
  const retrying = between.map((task, index): RetryingTask => {
    const until = delayedUntil.get(jobIds[index] ?? '');
    return {
      taskId: task.task_id,
      failedAttempt: task.failed_attempt,
      error: task.error,
      nextAttempt: task.failed_attempt + 1,
      maxAttempts,
      retryAt: until === undefined ? null : new Date(until).toISOString(),
    };
  });
  const beats = await readWorkerBeats(producer.connection, producer.prefix, (name) =>
    producer.connectedWorkers(name),
  );
  const workers = beats.filter(
    (beat) => beat.queue === benchmark.job.queue || beat.queue === AGGREGATE_QUEUE,
  );
  const notes: string[] = [];
  // Workers refuse to start on such a Redis; this is one that changed under a running fleet.
  const policy = maxmemoryPolicyOf(await producer.connection.info('memory'));
  if (policy !== undefined && policy !== 'noeviction')
    notes.push(
      `Redis maxmemory-policy is ${policy}: it may evict queue keys (a job left in no state never runs); set maxmemory-policy noeviction`,
    );
  if (pending > 0) {
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
        `${jobless} open task(s) have no job that will run them (Redis lost them, or they failed out): \`scheduler worker\` re-enqueues them, or run \`scheduler resume ${runId}\``,
      );
    }
    if (!workers.some((beat) => beat.queue === AGGREGATE_QUEUE)) {
      notes.push(
        'no `scheduler worker` runs: what a fault leaves behind (lost jobs, a Redis that lost its data) is not repaired until one does',
      );
    }
  }
  const fullRun = benchmark.grading ? await runs.get(runId) : undefined;
  const graded = fullRun ? await benchmark.grading?.summarize(db, fullRun) : null;
  return {
    run,
    successLabel: benchmark.success.label,
    rewardIsPartial: benchmark.rewardIsPartial,
    queueName: benchmark.job.queue,
    done,
    pending,
    etaSeconds:
      jobless > 0 || notes.some((note) => note.startsWith('no worker')) ? null : etaSeconds,
    queue,
    jobless,
    retrying,
    workers,
    notes,
    ...(graded ? { graded } : {}),
  };
}

/** When a retry is due, relative to now: "in 4 min", "in 12 s", "due now". */
function dueIn(retryAt: string, now: number): string {
  const seconds = Math.round((Date.parse(retryAt) - now) / 1000);
  if (seconds <= 0) return 'due now';
  return seconds < 120 ? `in ${seconds} s` : `in ${Math.round(seconds / 60)} min`;
}

/** How many of the retrying tasks `describeStatus` lists one by one. */
const RETRIES_LISTED = 5;

/**
 * One line: progress, counts with the success label, the mean reward where it says more than
 * success; then what is wrong, and the tasks waiting to be retried with when.
 */
export function describeStatus(status: RunStatus, now = Date.now()): string {
  const r = status.run;
  const waiting = status.retrying.length;
  const retries = status.retrying
    .slice(0, RETRIES_LISTED)
    .map(
      (task) =>
        `  ~ ${task.taskId}: attempt ${task.failedAttempt} failed (${task.error ?? 'no error recorded'}); attempt ${task.nextAttempt} of ${task.maxAttempts} ` +
        (task.retryAt === null
          ? 'waits for a worker\n'
          : `at ${task.retryAt} (${dueIn(task.retryAt, now)})\n`),
    );
  if (waiting > RETRIES_LISTED) retries.push(`  ~ and ${waiting - RETRIES_LISTED} more\n`);
  return (
    `${r.run_id} ${r.name} (${r.benchmark}, ${r.run_status}): ${status.done}/${r.total} done, ` +
    `${r.queued} queued, ${r.running - waiting} running, ` +
    (waiting > 0 ? `${waiting} waiting to retry, ` : '') +
    `${r.succeeded} success (${status.successLabel}), ${r.failed} failed, ${r.cancelled} cancelled, ${r.errors} errors` +
    (r.avg_reward !== null && status.rewardIsPartial ? `, mean reward ${r.avg_reward}` : '') +
    (status.etaSeconds !== null ? `, eta ${status.etaSeconds}s` : '') +
    '\n' +
    (status.graded ? `  ${describeGraded(status.graded, status.successLabel)}\n` : '') +
    status.notes.map((note) => `  ! ${note}\n`).join('') +
    retries.join('')
  );
}
