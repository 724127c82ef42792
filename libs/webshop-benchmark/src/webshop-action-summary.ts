import { objectOf, parsedAction, type ActionSummary } from '@benchfleet/benchmark-kit';

/** A WebShop action, `search[red shoes]`: its kind is the word before the bracket. */
const BRACKETED = /^\s*([A-Za-z_][\w-]*)\s*\[/;
/**
 * The worker's step action as it writes it (`JSON.stringify` of an object whose first field is
 * `action`): the string literal of that field, read without parsing the rest (the page's
 * clickables, a thought), which a span does not show.
 */
const LEADING_ACTION_FIELD = /^\{"action":("(?:[^"\\]|\\.)*")[,}]/;

function ofText(text: string): ActionSummary {
  return { kind: BRACKETED.exec(text)?.[1]?.toLowerCase() ?? null, summary: text };
}

/**
 * What a WebShop step's span says the agent did: its action (JSON text with an `action` field, or
 * the text itself), the word before the bracket being its kind.
 */
export function summarizeWebshopAction(action: unknown): ActionSummary {
  if (typeof action === 'string') {
    const literal = LEADING_ACTION_FIELD.exec(action)?.[1];
    if (literal !== undefined) return ofText(JSON.parse(literal) as string);
  }
  const value = parsedAction(action);
  if (value === null || value === undefined) return { kind: null, summary: null };
  if (typeof value === 'string') return ofText(value);
  const field = objectOf(value)?.['action'];
  if (typeof field === 'string') return ofText(field);
  return { kind: null, summary: JSON.stringify(value) };
}
