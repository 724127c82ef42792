import { roundLikePython } from '@benchfleet/core';
import {
  computeRunNumbers,
  type RunNumbersByDomain,
  type TaskForNumbers,
} from '@benchfleet/benchmark-kit';

export interface OsworldFinalJson extends RunNumbersByDomain {
  benchmark_config: Record<string, unknown>;
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
    summary,
    per_domain,
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
