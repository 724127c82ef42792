// A run's limits, whatever its benchmark: what it may spend on LLM calls (per run, per task), and
// how many infrastructure failures it takes before it pauses. Given at enqueue, stored in
// `runs.limits` (this schema owns the column), read by workers for every governed call.
import { z } from 'zod';
import { errorMessage, UsageError } from '@benchfleet/core';
import { RunsRepository, type Database } from '@benchfleet/db';
import {
  limitsFileSchema,
  LlmLimitsTable,
  priceTableSchema,
  readLimitsFile,
  readPriceTableSource,
  type LlmBudget,
} from '@benchfleet/llm-governor';

/** The window of the infra-error budget when `--infra-window` is not given. */
const DEFAULT_INFRA_WINDOW = 20;

/** `runs.limits`. */
const runLimitsSchema = z.strictObject({
  /** USD the run may spend on LLM calls (`--max-cost-usd`). */
  max_cost_usd: z.number().positive().optional(),
  /** USD one task may spend (`--max-task-cost-usd`). */
  max_task_cost_usd: z.number().positive().optional(),
  /** Infra failures among the last `infra_window` tasks above this share pause the run. */
  max_infra_error_rate: z.number().min(0).max(1).optional(),
  infra_window: z.number().int().positive().optional(),
  /** The price the enqueue found for the run's model (USD per 1M tokens); null: none (unpriced). */
  model_price: z
    .strictObject({ inputUsdPerMillion: z.number(), outputUsdPerMillion: z.number() })
    .nullable()
    .optional(),
});
export type RunLimits = z.output<typeof runLimitsSchema>;

/** `scheduler enqueue`'s limit flags, as typed (commander's attribute names). */
export interface RunLimitFlags {
  readonly maxCostUsd?: string;
  readonly maxTaskCostUsd?: string;
  readonly maxInfraErrorRate?: string;
  readonly infraWindow?: string;
  /** Refuse to enqueue a run whose model has no price. */
  readonly refuseUnpriced?: boolean;
  /** Where the enqueue looks up the model's price: as the workers do (`--price-table`, `--llm-limits`). */
  readonly priceTable?: string;
  readonly llmLimits?: string;
}

/** `runs.limits` read through its schema; a run enqueued before limits existed has none. */
export function readRunLimits(stored: unknown): RunLimits {
  const parsed = runLimitsSchema.safeParse(stored ?? {});
  return parsed.success ? parsed.data : {};
}

/** The spend limits a governed call of the run is held to; undefined when the run has none. */
function budgetOfRun(limits: RunLimits): LlmBudget | undefined {
  if (limits.max_cost_usd === undefined && limits.max_task_cost_usd === undefined) return undefined;
  return {
    ...(limits.max_cost_usd !== undefined && { runUsd: limits.max_cost_usd }),
    ...(limits.max_task_cost_usd !== undefined && { taskUsd: limits.max_task_cost_usd }),
  };
}

function usd(flag: string, text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  const value = Number(text.replace(/^\$/, ''));
  if (!Number.isFinite(value) || value <= 0 || text.trim() === '')
    throw new UsageError(`${flag} ${text}: expected an amount in USD above 0, e.g. ${flag} 2.50`);
  return value;
}

function rate(text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  const percent = text.trim().endsWith('%');
  const value = Number(percent ? text.trim().slice(0, -1) : text) / (percent ? 100 : 1);
  if (!Number.isFinite(value) || value < 0 || value > 1 || text.trim() === '')
    throw new UsageError(
      `--max-infra-error-rate ${text}: expected a share from 0 to 1 (or a percentage), e.g. --max-infra-error-rate 0.25`,
    );
  return value;
}

function windowSize(text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  const value = Number(text);
  if (!Number.isInteger(value) || value < 1 || value > 10_000)
    throw new UsageError(
      `--infra-window ${text}: expected a whole number of tasks from 1 to 10000, e.g. --infra-window 20`,
    );
  return value;
}

/** The model a planned run calls, as its rows name it (`model.name`, else `agent.model`) and where. */
function runModelOf(run: {
  model: Record<string, unknown> | null;
  agent: Record<string, unknown> | null;
}): { name: string; provider: string } | undefined {
  const name = run.model?.['name'] ?? run.agent?.['model'];
  if (typeof name !== 'string') return undefined;
  const provider = run.agent?.['baseUrl'] ?? run.model?.['base_url'] ?? run.model?.['provider'];
  return { name, provider: typeof provider === 'string' ? provider : '' };
}

function priceTableOf(flags: RunLimitFlags): LlmLimitsTable {
  const read = <T>(flag: string, source: string, parse: () => T): T => {
    try {
      return parse();
    } catch (error) {
      throw new UsageError(`${flag} ${source}: ${errorMessage(error).split('\n')[0] ?? ''}`);
    }
  };
  const prices =
    flags.priceTable === undefined
      ? {}
      : read('--price-table', flags.priceTable, () =>
          priceTableSchema.parse(readPriceTableSource(flags.priceTable!)),
        );
  const entries =
    flags.llmLimits === undefined
      ? []
      : read(
          '--llm-limits',
          flags.llmLimits,
          () => limitsFileSchema.parse(readLimitsFile(flags.llmLimits!)).limits,
        );
  return new LlmLimitsTable({ entries, prices });
}

/**
 * The run's limits from the enqueue flags, and what the user must hear: a model with no price is
 * a warning (its cost shows as unpriced, never $0), refused with `--refuse-unpriced`, and refused
 * when a spend limit is asked for (it could not be enforced). Bad values are one UsageError.
 */
export function planRunLimits(
  flags: RunLimitFlags,
  run: { model: Record<string, unknown> | null; agent: Record<string, unknown> | null },
): { limits: RunLimits; warnings: string[] } {
  const maxCost = usd('--max-cost-usd', flags.maxCostUsd);
  const maxTaskCost = usd('--max-task-cost-usd', flags.maxTaskCostUsd);
  const maxRate = rate(flags.maxInfraErrorRate);
  const window = windowSize(flags.infraWindow);
  if (window !== undefined && maxRate === undefined)
    throw new UsageError(
      `--infra-window ${flags.infraWindow}: it sizes the window of --max-infra-error-rate; give that too`,
    );
  const limits: RunLimits = {
    ...(maxCost !== undefined && { max_cost_usd: maxCost }),
    ...(maxTaskCost !== undefined && { max_task_cost_usd: maxTaskCost }),
    ...(maxRate !== undefined && {
      max_infra_error_rate: maxRate,
      infra_window: window ?? DEFAULT_INFRA_WINDOW,
    }),
  };
  const warnings: string[] = [];
  const model = runModelOf(run);
  if (model === undefined) {
    if (maxCost !== undefined || maxTaskCost !== undefined)
      warnings.push(
        'this run names no LLM model: its spend limits apply to whatever governed calls it makes',
      );
    return { limits, warnings };
  }
  const price = priceTableOf(flags).resolve(model.provider, model.name).price;
  if (price !== undefined) return { limits: { ...limits, model_price: price }, warnings };
  const where =
    'give it with --price-table or LLM_PRICE_TABLE (USD per 1M tokens), or a limits file (--llm-limits / LLM_LIMITS) — the workers need it too';
  const spendFlag =
    maxCost !== undefined
      ? '--max-cost-usd'
      : maxTaskCost !== undefined
        ? '--max-task-cost-usd'
        : null;
  if (spendFlag !== null)
    throw new UsageError(
      `${spendFlag}: model ${model.name} has no price, so a spend limit cannot be enforced; ${where}`,
    );
  if (flags.refuseUnpriced)
    throw new UsageError(
      `--refuse-unpriced: model ${model.name} has no price; ${where}, or leave out --refuse-unpriced to run it unpriced`,
    );
  warnings.push(
    `model ${model.name} has no price: this run's cost will show as "unpriced", not $0 (${where}; --refuse-unpriced refuses such runs)`,
  );
  return { limits: { ...limits, model_price: null }, warnings };
}

/**
 * What each governed call of a run is held to, read from `runs.limits` once per run (limits are
 * fixed at enqueue) — the governor's `budgetOf`, for the agent's calls and relayed ones alike.
 */
export function runBudgets(
  db: Database,
): (attribution: { readonly runId: string }) => Promise<LlmBudget | undefined> {
  const known = new Map<string, Promise<LlmBudget | undefined>>();
  return (attribution) => {
    let budget = known.get(attribution.runId);
    if (budget === undefined) {
      budget = new RunsRepository(db)
        .get(attribution.runId)
        .then((run) => (run ? budgetOfRun(readRunLimits(run.limits)) : undefined));
      // Postgres not answering now is asked again by the next call.
      budget.catch(() => known.delete(attribution.runId));
      known.set(attribution.runId, budget);
      if (known.size > 1000) known.delete(known.keys().next().value as string);
    }
    return budget;
  };
}
