import { z } from 'zod';

// A run's summary, computed from its Postgres rows by `@benchfleet/runs` and stored in
// `runs.summary`, which this schema owns: the numbers of the original OSWorld benchmark's
// `final.json` for every benchmark, plus the benchmark's own scores. Exporters read it.

const taskSteps = z.object({ task_id: z.string(), steps: z.number() });

export const runNumbersSchema = z.object({
  total_tasks: z.number(),
  completed: z.number(),
  failed: z.number(),
  cancelled: z.number(),
  errors: z.number(),
  /** completed / total, 4 decimals. What "completed" means is the benchmark's success label. */
  success_rate: z.number(),
  /** Over the tasks that are not `error`, 1 decimal. */
  avg_steps: z.number(),
  avg_duration_seconds: z.number(),
  /** Over all tasks, errors included; the first on ties. */
  max_steps_task: taskSteps.nullable(),
  /** Over the tasks that are not `error`; the first on ties. */
  min_steps_task: taskSteps.nullable(),
  longest_task: z.object({ task_id: z.string(), duration_seconds: z.number() }).nullable(),
});
export type RunNumbers = z.output<typeof runNumbersSchema>;

export const domainNumbersSchema = z.object({
  total: z.number(),
  completed: z.number(),
  success_rate: z.number(),
  avg_steps: z.number(),
});
export type DomainNumbers = z.output<typeof domainNumbersSchema>;

export const runSummarySchema = z.object({
  run_id: z.string(),
  benchmark: z.string(),
  /** What a success is for this benchmark, in words a reader cannot mistake. */
  success_label: z.string(),
  summary: runNumbersSchema,
  /** Keyed by domain, in sorted order. */
  per_domain: z.record(z.string(), domainNumbersSchema),
  pending: z.number(),
  tokens_in: z.number(),
  tokens_out: z.number(),
  /** null when the cost is not known: a settled task used tokens nobody priced. */
  cost_usd: z.number().nullable(),
  cost_per_success_usd: z.number().nullable(),
  /** The benchmark's own numbers (WebShop: its score, average reward, bought rate). */
  scores: z.record(z.string(), z.number()).nullable(),
  started_at: z.string().nullable(),
  finished_at: z.string().nullable(),
  total_duration_seconds: z.number().nullable(),
});
export type RunSummary = z.output<typeof runSummarySchema>;

/** `runs.summary` read through its schema; null when there is none yet (or an older build wrote it). */
export function readRunSummary(stored: unknown): RunSummary | null {
  const parsed = runSummarySchema.safeParse(stored);
  return parsed.success ? parsed.data : null;
}
