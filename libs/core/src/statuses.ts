export const TASK_STATUSES = [
  'queued',
  'running',
  'success',
  'failed',
  'cancelled',
  'error',
] as const;
export type TaskStatus = (typeof TASK_STATUSES)[number];

/** A task settled: it has its outcome and never leaves this status (the one definition of "settled"). */
export const SETTLED_TASK_STATUSES = ['success', 'failed', 'cancelled', 'error'] as const;
export type SettledTaskStatus = (typeof SETTLED_TASK_STATUSES)[number];

export function isSettledTaskStatus(status: string): status is SettledTaskStatus {
  return (SETTLED_TASK_STATUSES as readonly string[]).includes(status);
}

/** The settled statuses as a SQL list, for statements written as text: `status in ${…}`. */
export const SETTLED_TASK_STATUSES_SQL = `(${SETTLED_TASK_STATUSES.map((s) => `'${s}'`).join(', ')})`;

export const ATTEMPT_STATUSES = ['running', 'success', 'failed', 'cancelled', 'error'] as const;
export type AttemptStatus = (typeof ATTEMPT_STATUSES)[number];

/**
 * Why an attempt ended in `error`: `infra`, a transient fault of the fleet (retried, and re-run by
 * `resume`); `permanent`, one retrying cannot fix (recorded once); `agent`, the episode's own
 * outcome (e.g. a Bytebot task that could not be created from its instruction); `budget`, stopped
 * by a spend limit of its task or run (neither the agent's failure nor a fault; never re-run).
 */
export const ERROR_CLASSES = ['infra', 'permanent', 'agent', 'budget'] as const;
export type ErrorClass = (typeof ERROR_CLASSES)[number];

export const RUN_STATUSES = ['queued', 'running', 'finished', 'cancelled'] as const;
export type RunStatus = (typeof RUN_STATUSES)[number];
