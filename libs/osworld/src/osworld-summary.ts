import { roundLikePython } from './python-compatible-format.js';

// The aggregate numbers of the original benchmark's final.json (`compute_final_stats`).

export interface OsworldResultForSummary {
  task_id: string;
  domain: string;
  /** `success`, `failed`, `cancelled` or `error`. */
  status: string;
  total_steps: number;
  duration_seconds: number;
}

export interface OsworldSummary {
  total_tasks: number;
  completed: number;
  failed: number;
  cancelled: number;
  errors: number;
  /** completed / total, 4 decimals. */
  success_rate: number;
  /** Over the tasks that are not `error`, 1 decimal. */
  avg_steps: number;
  avg_duration_seconds: number;
  /** Over all tasks, errors included; the first on ties. */
  max_steps_task: { task_id: string; steps: number } | null;
  /** Over the tasks that are not `error`; the first on ties. */
  min_steps_task: { task_id: string; steps: number } | null;
  longest_task: { task_id: string; duration_seconds: number } | null;
}

export interface OsworldDomainSummary {
  total: number;
  completed: number;
  success_rate: number;
  avg_steps: number;
}

export interface OsworldSummaryComputation {
  summary: OsworldSummary;
  /** Keyed by domain, in sorted order. */
  per_domain: Record<string, OsworldDomainSummary>;
}

export function computeOsworldSummary(results: readonly OsworldResultForSummary[]): OsworldSummaryComputation {
  const countOf = (status: string): number => results.filter((result) => result.status === status).length;
  const scored = results.filter((result) => result.status !== 'error');
  const completed = countOf('success');

  const byDomain = new Map<string, OsworldResultForSummary[]>();
  for (const result of results) byDomain.set(result.domain, [...(byDomain.get(result.domain) ?? []), result]);
  const per_domain: Record<string, OsworldDomainSummary> = {};
  for (const domain of [...byDomain.keys()].sort()) {
    const domainResults = byDomain.get(domain) ?? [];
    const domainCompleted = domainResults.filter((result) => result.status === 'success').length;
    per_domain[domain] = {
      total: domainResults.length,
      completed: domainCompleted,
      success_rate: ratio(domainCompleted, domainResults.length, 4),
      avg_steps: average(domainResults.filter((result) => result.status !== 'error').map((result) => result.total_steps)),
    };
  }

  const maxSteps = firstBest(results, (result) => result.total_steps, (a, b) => a > b);
  const minSteps = firstBest(scored, (result) => result.total_steps, (a, b) => a < b);
  const longest = firstBest(scored, (result) => result.duration_seconds, (a, b) => a > b);
  return {
    summary: {
      total_tasks: results.length,
      completed,
      failed: countOf('failed'),
      cancelled: countOf('cancelled'),
      errors: countOf('error'),
      success_rate: ratio(completed, results.length, 4),
      avg_steps: average(scored.map((result) => result.total_steps)),
      avg_duration_seconds: average(scored.map((result) => result.duration_seconds)),
      max_steps_task: maxSteps && { task_id: maxSteps.task_id, steps: maxSteps.total_steps },
      min_steps_task: minSteps && { task_id: minSteps.task_id, steps: minSteps.total_steps },
      longest_task: longest && { task_id: longest.task_id, duration_seconds: longest.duration_seconds },
    },
    per_domain,
  };
}

export interface OsworldFinalJson extends OsworldSummaryComputation {
  benchmark_config: Record<string, unknown>;
  started_at: string;
  finished_at: string;
  total_duration_seconds: number;
  tasks: { task_id: string; domain: string; status: string; total_steps: number; duration_seconds: number }[];
}

/** The whole final.json, in the original's key order. */
export function buildOsworldFinalJson(input: {
  benchmark_config: Record<string, unknown>;
  started_at: string;
  finished_at: string;
  results: readonly OsworldResultForSummary[];
}): OsworldFinalJson {
  const { summary, per_domain } = computeOsworldSummary(input.results);
  return {
    benchmark_config: input.benchmark_config,
    summary,
    per_domain,
    started_at: input.started_at,
    finished_at: input.finished_at,
    total_duration_seconds: roundLikePython((Date.parse(input.finished_at) - Date.parse(input.started_at)) / 1000, 1),
    tasks: input.results.map((result) => ({
      task_id: result.task_id,
      domain: result.domain,
      status: result.status,
      total_steps: result.total_steps,
      duration_seconds: result.duration_seconds,
    })),
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
function firstBest<T>(items: readonly T[], key: (item: T) => number, beats: (a: number, b: number) => boolean): T | null {
  let best: T | null = null;
  for (const item of items) if (best === null || beats(key(item), key(best))) best = item;
  return best;
}
