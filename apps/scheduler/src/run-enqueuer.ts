import { execFileSync } from 'node:child_process';
import { newRunId, type Benchmark } from '@benchfleet/core';
import { runsRepository, tasksRepository, type Database, type Task } from '@benchfleet/db';
import { jobCatalog, taskJobId, type JobProducer } from '@benchfleet/queue';

export interface PlannedTask {
  taskId: string;
  domain: string;
  instruction: string;
  spec: Record<string, unknown>;
  /** WebShop only: the goal the episode plays. */
  goalIndex?: number;
}

export interface RunPlan {
  benchmark: Benchmark;
  name: string;
  config: Record<string, unknown>;
  model: Record<string, unknown> | null;
  agent: Record<string, unknown> | null;
  tasks: PlannedTask[];
}

export interface EnqueueDeps {
  db: Database;
  producer: JobProducer;
  onProgress?: (done: number, total: number) => void;
  /** BENCHFLEET_CODE_VERSION, when set. */
  codeVersion?: string;
}

const JOB_OF_BENCHMARK = { osworld: 'osworld-task', webshop: 'webshop-episode' } as const;

/** What this code is, recorded on every run: the configured version, else the git commit. */
export function codeVersion(configured?: string): string {
  if (configured) return configured;
  try {
    return execFileSync('git', ['rev-parse', '--short', 'HEAD'], { stdio: ['ignore', 'pipe', 'ignore'] }).toString().trim();
  } catch {
    return 'unknown';
  }
}

function jobItems(runId: string, benchmark: Benchmark, tasks: Array<{ taskId: string; goalIndex?: number }>) {
  return tasks.map((task) => ({
    jobId: taskJobId(runId, task.taskId),
    payload:
      benchmark === 'webshop'
        ? { runId, taskId: task.taskId, goalIndex: task.goalIndex ?? Number.NaN }
        : { runId, taskId: task.taskId },
  }));
}

/**
 * Postgres first (run and task rows in one transaction), then the jobs. If adding jobs fails, the
 * jobs already added and the rows are removed again: a failed enqueue leaves nothing behind.
 */
export async function enqueueRun(deps: EnqueueDeps, plan: RunPlan, runId = newRunId()): Promise<string> {
  const runs = runsRepository(deps.db);
  await runs.createWithTasks({
    run: {
      id: runId,
      name: plan.name,
      benchmark: plan.benchmark,
      config: JSON.stringify(plan.config),
      model: plan.model ? JSON.stringify(plan.model) : null,
      agent: plan.agent ? JSON.stringify(plan.agent) : null,
      code_version: codeVersion(deps.codeVersion),
    },
    tasks: plan.tasks.map((task, seq) => ({
      task_id: task.taskId,
      seq,
      domain: task.domain,
      instruction: task.instruction,
      spec: JSON.stringify(task.spec),
    })),
  });
  const jobName = JOB_OF_BENCHMARK[plan.benchmark];
  const items = jobItems(runId, plan.benchmark, plan.tasks);
  try {
    await deps.producer.enqueueBulk(jobName, items as never, (done) => deps.onProgress?.(done, items.length));
  } catch (error) {
    await deps.producer
      .removeJobs(
        jobCatalog[jobName].queue,
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
export async function requeueTasks(deps: EnqueueDeps, runId: string, benchmark: Benchmark, tasks: Task[]): Promise<RequeueReport> {
  const jobName = JOB_OF_BENCHMARK[benchmark];
  const queue = deps.producer.queue(jobCatalog[jobName].queue);
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
    benchmark,
    toAdd.map((task) => ({ taskId: task.task_id, goalIndex: Number(task.spec.goal_index) })),
  );
  await deps.producer.enqueueBulk(jobName, items as never, (done) => deps.onProgress?.(done, items.length));
  report.requeued = toAdd.map((task) => task.task_id);
  return report;
}
