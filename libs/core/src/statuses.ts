export const TASK_STATUSES = [
  'queued',
  'running',
  'success',
  'failed',
  'cancelled',
  'error',
] as const;
export type TaskStatus = (typeof TASK_STATUSES)[number];

/** Statuses a task never leaves once written. */
export const FINAL_TASK_STATUSES = ['success', 'failed', 'cancelled', 'error'] as const;
export type FinalTaskStatus = (typeof FINAL_TASK_STATUSES)[number];

export function isFinalTaskStatus(status: string): status is FinalTaskStatus {
  return (FINAL_TASK_STATUSES as readonly string[]).includes(status);
}

export const ATTEMPT_STATUSES = ['running', 'success', 'failed', 'cancelled', 'error'] as const;
export type AttemptStatus = (typeof ATTEMPT_STATUSES)[number];

/**
 * Why an attempt ended in `error`: `infra`, a transient fault of the fleet (retried, and re-run by
 * `resume`); `permanent`, one retrying cannot fix (recorded once); `agent`, the episode's own
 * outcome (e.g. a Bytebot task that could not be created from its instruction).
 */
export const ERROR_CLASSES = ['infra', 'permanent', 'agent'] as const;
export type ErrorClass = (typeof ERROR_CLASSES)[number];

export const RUN_STATUSES = ['queued', 'running', 'finished', 'cancelled'] as const;
export type RunStatus = (typeof RUN_STATUSES)[number];
