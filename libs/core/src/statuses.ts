export const TASK_STATUSES = ['queued', 'running', 'success', 'failed', 'cancelled', 'error'] as const;
export type TaskStatus = (typeof TASK_STATUSES)[number];

/** Statuses a task never leaves once written. */
export const FINAL_TASK_STATUSES = ['success', 'failed', 'cancelled', 'error'] as const;
export type FinalTaskStatus = (typeof FINAL_TASK_STATUSES)[number];

export function isFinalTaskStatus(status: string): status is FinalTaskStatus {
  return (FINAL_TASK_STATUSES as readonly string[]).includes(status);
}

export const ATTEMPT_STATUSES = ['running', 'success', 'failed', 'cancelled', 'error'] as const;
export type AttemptStatus = (typeof ATTEMPT_STATUSES)[number];

/** `infra`: the fleet's fault, retried. `agent`: the agent's or the input's, final. */
export type ErrorClass = 'infra' | 'agent';

export const RUN_STATUSES = ['queued', 'running', 'finished', 'cancelled'] as const;
export type RunStatus = (typeof RUN_STATUSES)[number];

export const BENCHMARKS = ['osworld', 'webshop'] as const;
export type Benchmark = (typeof BENCHMARKS)[number];
