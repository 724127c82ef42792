import type { TaskPanel, TaskPanelText } from '@benchfleet/benchmark-kit';
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

/** Every artifact URI the panels link to: the only files the dashboard serves for the task. */
function artifactUrisOf(panels: readonly TaskPanel[]): Set<string> {
  const uris = new Set<string>();
  const visit = (parts: readonly TaskPanelText[]) => {
    for (const part of parts) {
      if (typeof part === 'string') continue;
      if ('artifact' in part) uris.add(part.artifact);
      else if ('muted' in part) visit(part.muted);
    }
  };
  for (const panel of panels) {
    for (const paragraph of panel.paragraphs ?? []) visit(paragraph.text);
    for (const row of panel.table?.rows ?? [])
      for (const cell of Object.values(row.cells))
        if (cell !== null && typeof cell === 'object') visit(cell.text);
  }
  return uris;
}

/** The artifacts a task's benchmark panels link to (NotFound for a task that does not exist). */
export async function loadTaskArtifacts(
  db: Database,
  benchmarks: BenchmarkViews,
  values: TaskValues,
): Promise<Set<string>> {
  const [task] = await runNamedQuery<TaskDetailRow, 'run' | 'task'>(db, taskQuery, values);
  if (!task) throw new NotFound(`task ${values.task} of run ${values.run} not found`);
  return artifactUrisOf((await benchmarkPanels(db, benchmarks, task, values)).panels);
}

/** Everything a task's page shows, each part with the SQL that read it. */
export async function loadTaskDetail(
  db: Database,
  benchmarks: BenchmarkViews,
  values: TaskValues,
): Promise<TaskDetail> {
  const [task] = await runNamedQuery<TaskDetailRow, 'run' | 'task'>(db, taskQuery, values);
  if (!task) throw new NotFound(`task ${values.task} of run ${values.run} not found`);
  const gradeQuery = benchmarks.queriesOf(task.benchmark).taskGrade;
  const [attempts, steps, own, grades] = await Promise.all([
    runNamedQuery<AttemptRow, 'run' | 'task'>(db, attemptsQuery, values),
    runNamedQuery<StepRow, 'run' | 'task'>(db, stepsQuery, values),
    benchmarkPanels(db, benchmarks, task, values),
    gradeQuery
      ? runNamedQuery<{ score: number | null }, 'run' | 'task'>(db, gradeQuery, values)
      : undefined,
  ]);
  const factQueries = [taskQuery, ...(gradeQuery ? [gradeQuery] : [])];
  return {
    task,
    grade: grades ? { graded: grades.length > 0, score: grades[0]?.score ?? null } : null,
    attempts,
    steps,
    panels: own.panels,
    panel_queries: [...factQueries, ...own.ran].map((query) => query.name),
    queries: [...factQueries, attemptsQuery, stepsQuery, ...own.ran].map((query) =>
      shown(query, values),
    ),
  };
}
