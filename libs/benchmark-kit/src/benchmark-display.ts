import type { NamedQuery } from '@benchfleet/db';
import type { TaskPanel, TrajectoryPanel } from './task-panel.js';

/** One task as a benchmark's task detail receives it: the row as stored, spec and result as JSON. */
export interface TaskDetailTask {
  readonly run_id: string;
  readonly task_id: string;
  readonly status: string;
  readonly final_api_status: string | null;
  readonly reward: number | null;
  readonly success: boolean | null;
  /** As stored: rows written before a schema changed are shown too, so nothing is parsed for you. */
  readonly spec: unknown;
  readonly result: unknown;
}

export interface TaskDetailContext {
  readonly task: TaskDetailTask;
  /**
   * Runs one of the benchmark's named queries with the task's `:run` and `:task`; the dashboard
   * shows its SQL with the panels ("Show SQL"), so every number on them can be checked in psql.
   */
  query<R>(query: NamedQuery<'run' | 'task'>): Promise<R[]>;
}

/** Why a task fell short, as a SQL expression over the task row `t` (text; null when it says nothing). */
export interface FailureReason {
  /** The heading of the reason's column in the dashboard's Failures panel. */
  readonly label: string;
  readonly sql: string;
}

/**
 * How viewers (the dashboard) show a benchmark's runs. Everything but the worker command is
 * optional: a benchmark that says nothing gets the generic step view and the plain failure groups.
 */
export interface BenchmarkDisplay {
  /** Which of the dashboard's trajectory panels shows a task (see TrajectoryPanel); default `steps`. */
  readonly trajectory?: TrajectoryPanel;
  /** How a user starts a worker, for a run that nothing consumes. */
  readonly workerCommand: string;
  /** What each `tasks.result.stop_reason` means. */
  readonly stopReasons?: Readonly<Record<string, string>>;
  /** What each `tasks.final_api_status` means. */
  readonly finalStatuses?: Readonly<Record<string, string>>;
  /** The dashboard groups a run's failures by it, beside status, class and message. */
  readonly failureReason?: FailureReason;
  /**
   * The benchmark's own panels of a task page, from its own queries; called only for this
   * benchmark's tasks. A benchmark without it shows the generic task page alone.
   */
  taskDetail?(context: TaskDetailContext): Promise<readonly TaskPanel[]>;
}
