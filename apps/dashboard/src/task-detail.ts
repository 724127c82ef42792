import type { TaskPanel } from '@benchfleet/benchmark-kit';
import { runNamedQuery, type Database, type NamedQuery } from '@benchfleet/db';
import type { AttemptRow, StepRow, TaskDetail, TaskDetailRow } from '../shared/view-rows.js';
import type { BenchmarkViews } from './benchmark-views.js';
import { NotFound } from './http-policy.js';
import { shown } from './shown-sql.js';
import { attemptsQuery, stepsQuery, taskQuery } from './task-queries.js';

type TaskValues = { run: string; task: string };

/** The benchmark's own panels of the task, and the queries it ran for them; none for a benchmark without. */
async function benchmarkPanels(
  db: Database,
  benchmarks: BenchmarkViews,
  task: TaskDetailRow,
  values: TaskValues,
): Promise<{ panels: TaskPanel[]; ran: NamedQuery<'run' | 'task'>[] }> {
  const detail = benchmarks.taskDetail(task.benchmark);
  if (!detail) return { panels: [], ran: [] };
  const ran: NamedQuery<'run' | 'task'>[] = [];
  const panels = await detail({
    task: {
      run_id: task.run_id,
      task_id: task.task_id,
      status: task.status,
      final_api_status: task.final_api_status,
      reward: task.reward,
      success: task.success,
      spec: task.spec,
      result: task.result,
    },
    query: <R>(query: NamedQuery<'run' | 'task'>) => {
      ran.push(query);
      return runNamedQuery<R, 'run' | 'task'>(db, query, values);
    },
  });
  return { panels: [...panels], ran };
}

/** Everything a task's page shows, each part with the SQL that read it. */
export async function loadTaskDetail(
  db: Database,
  benchmarks: BenchmarkViews,
  values: TaskValues,
): Promise<TaskDetail> {
  const [task] = await runNamedQuery<TaskDetailRow, 'run' | 'task'>(db, taskQuery, values);
  if (!task) throw new NotFound(`task ${values.task} of run ${values.run} not found`);
  const [attempts, steps, own] = await Promise.all([
    runNamedQuery<AttemptRow, 'run' | 'task'>(db, attemptsQuery, values),
    runNamedQuery<StepRow, 'run' | 'task'>(db, stepsQuery, values),
    benchmarkPanels(db, benchmarks, task, values),
  ]);
  return {
    task,
    attempts,
    steps,
    panels: own.panels,
    panel_queries: [taskQuery, ...own.ran].map((query) => query.name),
    queries: [taskQuery, attemptsQuery, stepsQuery, ...own.ran].map((query) =>
      shown(query, values),
    ),
  };
}
