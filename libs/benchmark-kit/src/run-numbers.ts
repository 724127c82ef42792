import { roundLikePython } from '@benchfleet/core';
import type { DomainNumbers, RunNumbers } from './run-summary.js';

// The aggregate numbers of the original OSWorld benchmark's final.json (`compute_final_stats`),
// which every run's summary carries whatever its benchmark; its successes are `succeeded` (the
// original's `completed`: the OSWorld export writes that name back).

export interface TaskForNumbers {
  task_id: string;
  domain: string;
  /** `success`, `failed`, `cancelled` or `error`. */
  status: string;
  total_steps: number;
  duration_seconds: number;
}

export interface RunNumbersByDomain {
  summary: RunNumbers;
  /** Keyed by domain, in sorted order. */
  per_domain: Record<string, DomainNumbers>;
}

export function computeRunNumbers(results: readonly TaskForNumbers[]): RunNumbersByDomain {
  const countOf = (status: string): number =>
    results.filter((result) => result.status === status).length;
  const scored = results.filter((result) => result.status !== 'error');
  const succeeded = countOf('success');

  const byDomain = new Map<string, TaskForNumbers[]>();
  for (const result of results)
    byDomain.set(result.domain, [...(byDomain.get(result.domain) ?? []), result]);
  const per_domain: Record<string, DomainNumbers> = {};
  for (const domain of [...byDomain.keys()].sort()) {
    const domainResults = byDomain.get(domain) ?? [];
    const domainSucceeded = domainResults.filter((result) => result.status === 'success').length;
    per_domain[domain] = {
      total: domainResults.length,
      succeeded: domainSucceeded,
      success_rate: ratio(domainSucceeded, domainResults.length, 4),
      avg_steps: average(
        domainResults
          .filter((result) => result.status !== 'error')
          .map((result) => result.total_steps),
      ),
    };
  }

  const maxSteps = firstBest(
    results,
    (result) => result.total_steps,
    (a, b) => a > b,
  );
  const minSteps = firstBest(
    scored,
    (result) => result.total_steps,
    (a, b) => a < b,
  );
  const longest = firstBest(
    scored,
    (result) => result.duration_seconds,
    (a, b) => a > b,
  );
  return {
    summary: {
      total_tasks: results.length,
      succeeded,
      failed: countOf('failed'),
      cancelled: countOf('cancelled'),
      errors: countOf('error'),
      success_rate: ratio(succeeded, results.length, 4),
      avg_steps: average(scored.map((result) => result.total_steps)),
      avg_duration_seconds: average(scored.map((result) => result.duration_seconds)),
      max_steps_task: maxSteps && { task_id: maxSteps.task_id, steps: maxSteps.total_steps },
      min_steps_task: minSteps && { task_id: minSteps.task_id, steps: minSteps.total_steps },
      longest_task: longest && {
        task_id: longest.task_id,
        duration_seconds: longest.duration_seconds,
      },
    },
    per_domain,
  };
}

function ratio(part: number, whole: number, digits: number): number {
  return whole === 0 ? 0 : roundLikePython(part / whole, digits);
}

function average(values: readonly number[]): number {
  if (values.length === 0) return 0;
  return roundLikePython(values.reduce((sum, value) => sum + value, 0) / values.length, 1);
}

/** Python's `max`/`min` with a key: the first element that no later one beats. */
function firstBest<T>(
  items: readonly T[],
  key: (item: T) => number,
  beats: (a: number, b: number) => boolean,
): T | null {
  let best: T | null = null;
  for (const item of items) if (best === null || beats(key(item), key(best))) best = item;
  return best;
}
