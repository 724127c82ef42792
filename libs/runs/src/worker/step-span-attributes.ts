import type { StepRecord } from '@benchfleet/benchmark-kit';
import type { StepAttributes } from '@benchfleet/telemetry';

/** A WebShop-style action, `search[red shoes]`: its kind is the word before the bracket. */
const BRACKETED = /^\s*([A-Za-z_][\w-]*)\s*\[/;

interface ActionSummary {
  readonly kind: string | null;
  readonly summary: string | null;
}

function objectOf(value: unknown): Record<string, unknown> | null {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : null;
}

/** The action as a value: benchmarks record it as JSON text (WebShop, OSWorld) or as an object. */
function actionValue(action: unknown): unknown {
  if (typeof action !== 'string') return action;
  try {
    return JSON.parse(action) as unknown;
  } catch {
    return action;
  }
}

function ofText(text: string): ActionSummary {
  return { kind: BRACKETED.exec(text)?.[1]?.toLowerCase() ?? null, summary: text };
}

/** `{ tool_calls: [{ name, input }] }` (OSWorld through Bytebot): the tools' names, each with its input. */
function ofToolCalls(calls: readonly unknown[]): ActionSummary {
  const named = calls
    .map(objectOf)
    .filter((call): call is Record<string, unknown> => typeof call?.['name'] === 'string');
  if (named.length === 0) return { kind: null, summary: null };
  const names = [...new Set(named.map((call) => call['name'] as string))];
  const summary = named
    .map((call) =>
      call['input'] === undefined
        ? (call['name'] as string)
        : `${call['name'] as string}(${JSON.stringify(call['input'])})`,
    )
    .join(', ');
  return { kind: names.join(','), summary };
}

/**
 * What a step's span says the agent did: a low-cardinality kind (`search`, `click`,
 * `computer_click_mouse`) and a short summary, read from the action as the benchmark recorded it.
 * Shapes it does not know give no kind, and the action's JSON as summary.
 */
export function summarizeAction(action: unknown): ActionSummary {
  const value = actionValue(action);
  if (value === null || value === undefined) return { kind: null, summary: null };
  if (typeof value === 'string') return ofText(value);
  const object = objectOf(value);
  if (object !== null) {
    if (typeof object['action'] === 'string') return ofText(object['action']);
    if (Array.isArray(object['tool_calls'])) return ofToolCalls(object['tool_calls']);
  }
  return { kind: null, summary: JSON.stringify(value) };
}

/**
 * A recorded step as its `benchfleet.step` span describes it; `sinceLastStepMs` is its latency
 * when the benchmark reports none (the span then covers the time since the step before).
 */
export function stepSpanAttributes(step: StepRecord, sinceLastStepMs: number): StepAttributes {
  const { kind, summary } = summarizeAction(step.action);
  return {
    step: step.step,
    actionKind: kind,
    action: summary,
    latencyMs: step.latency_ms ?? sinceLastStepMs,
    tokensIn: step.tokens_in ?? null,
    tokensOut: step.tokens_out ?? null,
    reward: step.reward ?? null,
  };
}
