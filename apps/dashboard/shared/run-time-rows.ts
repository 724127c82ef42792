import type { ShownQuery } from './shown-query.js';

// The answers of the run-time routes (per-phase time, a run's timeline) and of the runs × tasks
// grid, shared by the server and the browser (types only).

/** A phase of an attempt: its name and what it covers. */
export interface PhaseName {
  name: string;
  meaning: string;
}

/** One phase over a run's settled tasks (each task's final attempt). */
export interface RunPhaseRow {
  phase: string;
  attempts: number;
  total_ms: number;
  p50_ms: number;
  p95_ms: number;
  max_ms: number;
}

export interface RunPhasesResponse {
  phases: PhaseName[];
  rows: RunPhaseRow[];
  query: ShownQuery;
}

/** One attempt of a task and its phases (milliseconds; null: the phase was not recorded). */
export interface TaskPhaseRow {
  attempt: number;
  status: string;
  total_ms: number | null;
  phases: Record<string, number | null>;
}

export interface TaskPhasesResponse {
  phases: PhaseName[];
  rows: TaskPhaseRow[];
  query: ShownQuery;
}

/** One time bucket of a run: attempts started and settled in it, and the most running at once. */
export interface TimelineBucketRow {
  bucket: number;
  starts_at: Date;
  bucket_seconds: number;
  started: number;
  succeeded: number;
  failed: number;
  errors: number;
  cancelled: number;
  peak_running: number;
}

export interface RunTimelineResponse {
  buckets: TimelineBucketRow[];
  query: ShownQuery;
}

export interface GridRun {
  run_id: string;
  name: string;
  benchmark: string;
  status: string;
  created_at: Date;
}

/** One epoch of a task in one run: `[epoch, status, reward, task row id or null when it is the task id]`. */
export type GridEpoch = [number, string, number | null, string | null];
/** One benchmark task: its id and, by run position (1-based), its epochs. */
export type GridTaskRow = [string, Record<string, GridEpoch[]>];

/**
 * The runs × tasks grid: `rows` is one JSON array per benchmark task, `[task id, cells]`, where
 * `cells` maps a run's position in `runs` (1-based) to its epochs, each `[epoch, status, reward,
 * task row id or null when it is the task id]`; a run without the task has no entry.
 */
export interface GridResponse {
  runs: GridRun[];
  /** True when the filter matched more runs than the grid takes. */
  more_runs: boolean;
  /** The tasks of the runs before `show` and `task` chose `rows` among them. */
  total_tasks: number;
  rows: GridTaskRow[];
  queries: ShownQuery[];
}
