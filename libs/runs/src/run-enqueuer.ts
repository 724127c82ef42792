import { execFileSync } from 'node:child_process';
import { newRunId } from '@benchfleet/core';
import type { AnyBenchmark } from '@benchfleet/benchmark-kit';
import { runsRepository, tasksRepository, type Database, type Task } from '@benchfleet/db';
import { taskJobId, type JobProducer } from '@benchfleet/queue';
import type { PlannedRun } from './run-planning.js';

export interface EnqueueDeps {
  db: Database;
  producer: JobProducer;
  onProgress?: (done: number, total: number) => void;
  /** BENCHFLEET_CODE_VERSION, when set. */
  codeVersion?: string;
}

/** What this code is, recorded on every run: the configured version, else the git commit. */
export function codeVersion(configured?: string): string {
  if (configured) return configured;
  try {
    return execFileSync('git', ['rev-parse', '--short', 'HEAD'], { stdio: ['ignore', 'pipe', 'ignore'] }).toString().trim();
  } catch {
    return 'unknown';
  }
}

function jobItems(runId: string, taskIds: readonly string[]) {
  return taskIds.map((taskId) => ({ jobId: taskJobId(runId, taskId), payload: { runId, taskId } }));
}

/**
 * Postgres first (run and task rows in one transaction), then the jobs. If adding jobs fails, the
 * jobs already added and the rows are removed again: a failed enqueue leaves nothing behind.
 */
export async function enqueueRun(deps: EnqueueDeps, planned: PlannedRun, runId = newRunId()): Promise<string> {
  const runs = runsRepository(deps.db);
  const { benchmark } = planned;
  await runs.createWithTasks({
    run: {
      id: runId,
      name: planned.name,
      benchmark: benchmark.name,
      config: JSON.stringify(planned.config),
      model: planned.model ? JSON.stringify(planned.model) : null,
      agent: planned.agent ? JSON.stringify(planned.agent) : null,
      code_version: codeVersion(deps.codeVersion),
    },
    tasks: planned.tasks.map((task, seq) => ({
      task_id: task.taskId,
      seq,
      domain: task.domain,
      instruction: task.instruction,
      spec: JSON.stringify(task.spec),
    })),
  });
  const items = jobItems(
    runId,
    planned.tasks.map((task) => task.taskId),
  );
  try {
    await deps.producer.enqueueBulk(benchmark.job, items, (done) => deps.onProgress?.(done, items.length));
  } catch (error) {
    await deps.producer
      .removeJobs(
        benchmark.job.queue,
        items.map((item) => item.jobId),
      )
      .catch(() => undefined);
    await runs.delete(runId).catch(() => undefined);
    throw error;
  }
  return runId;
}

export interface RequeueReport {
  requeued: string[];
  alreadyQueued: string[];
  active: string[];
}

/**
 * Puts tasks back on the queue: a job that is waiting or running is left alone; a finished or
 * failed one is replaced (its deterministic id would otherwise be ignored by BullMQ).
 */
export async function requeueTasks(deps: EnqueueDeps, runId: string, benchmark: AnyBenchmark, tasks: Task[]): Promise<RequeueReport> {
  const queue = deps.producer.queue(benchmark.job.queue);
  const report: RequeueReport = { requeued: [], alreadyQueued: [], active: [] };
  const toAdd: Task[] = [];
  for (const task of tasks) {
    const job = await queue.getJob(taskJobId(runId, task.task_id));
    const state = job ? await job.getState() : 'missing';
    if (state === 'active') report.active.push(task.task_id);
    else if (state === 'waiting' || state === 'delayed' || state === 'prioritized' || state === 'waiting-children') {
      report.alreadyQueued.push(task.task_id);
    } else {
      if (job) await job.remove();
      toAdd.push(task);
    }
  }
  await tasksRepository(deps.db).requeue(
    runId,
    toAdd.map((task) => task.task_id),
  );
  if (toAdd.length > 0) await runsRepository(deps.db).markQueued(runId);
  const items = jobItems(
    runId,
    toAdd.map((task) => task.task_id),
  );
  await deps.producer.enqueueBulk(benchmark.job, items, (done) => deps.onProgress?.(done, items.length));
  report.requeued = toAdd.map((task) => task.task_id);
  return report;
}
