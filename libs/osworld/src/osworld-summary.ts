import { roundLikePython } from '@benchfleet/core';
import {
  computeRunNumbers,
  type DomainNumbers,
  type RunNumbers,
  type TaskForNumbers,
} from '@benchfleet/benchmark-kit';

/** The original final.json's numbers: our `succeeded` under its name, `completed`, in its key order. */
type OriginalRunNumbers = Omit<RunNumbers, 'succeeded'> & { completed: number };
type OriginalDomainNumbers = Omit<DomainNumbers, 'succeeded'> & { completed: number };

function originalRunNumbers({ total_tasks, succeeded, ...rest }: RunNumbers): OriginalRunNumbers {
  return { total_tasks, completed: succeeded, ...rest };
}

function originalDomainNumbers({
  total,
  succeeded,
  ...rest
}: DomainNumbers): OriginalDomainNumbers {
  return { total, completed: succeeded, ...rest };
}

export interface OsworldFinalJson {
  benchmark_config: Record<string, unknown>;
  summary: OriginalRunNumbers;
  per_domain: Record<string, OriginalDomainNumbers>;
  started_at: string;
  finished_at: string;
  total_duration_seconds: number;
  tasks: {
    task_id: string;
    domain: string;
    status: string;
    total_steps: number;
    duration_seconds: number;
  }[];
}

/** The whole final.json, in the original's key order. */
export function buildOsworldFinalJson(input: {
  benchmark_config: Record<string, unknown>;
  started_at: string;
  finished_at: string;
  results: readonly TaskForNumbers[];
}): OsworldFinalJson {
  const { summary, per_domain } = computeRunNumbers(input.results);
  return {
    benchmark_config: input.benchmark_config,
    summary: originalRunNumbers(summary),
    per_domain: Object.fromEntries(
      Object.entries(per_domain).map(([domain, numbers]) => [
        domain,
        originalDomainNumbers(numbers),
      ]),
    ),
    started_at: input.started_at,
    finished_at: input.finished_at,
    total_duration_seconds: roundLikePython(
      (Date.parse(input.finished_at) - Date.parse(input.started_at)) / 1000,
      1,
    ),
    tasks: input.results.map((result) => ({
      task_id: result.task_id,
      domain: result.domain,
      status: result.status,
      total_steps: result.total_steps,
      duration_seconds: result.duration_seconds,
    })),
  };
}
