import type { AvailableActions } from './webshop-agent.js';

export type ParsedAction =
  | { readonly valid: true; readonly kind: 'search' | 'click' | 'think'; readonly action: string }
  | {
      readonly valid: false;
      readonly kind: 'invalid';
      readonly action: string;
      readonly reason: string;
    };

export type ParsedReply = ParsedAction & { readonly thought?: string };

const ACTION_SHAPE = /^([A-Za-z_]+)\[(.*)\]$/;
// Tolerates markdown emphasis, as in `**Action:** click[x]`.
const ACTION_LINE = /^\s*(?:\*\*|__)?action(?:\*\*|__)?\s*:\s*(?:\*\*|__)?\s*(.*)$/i;
const THOUGHT_PREFIX = /^\s*(?:\*\*|__)?thought(?:\*\*|__)?\s*:\s*(?:\*\*|__)?\s*/i;
const REASONING_BLOCK = /<think>([\s\S]*?)<\/think>/gi;

function invalid(action: string, reason: string): ParsedAction {
  return { valid: false, kind: 'invalid', action, reason };
}

function quote(text: string): string {
  return JSON.stringify(text.length > 120 ? `${text.slice(0, 120)}…` : text);
}

/**
 * Checks one action string against the page. The name is matched case-insensitively and the
 * argument of a click must equal a clickable ignoring case, as the store lowercases it; the result
 * is the canonical form the store understands.
 */
export function parseAction(candidate: string, available: AvailableActions): ParsedAction {
  const text = candidate.trim();
  const match = ACTION_SHAPE.exec(text);
  if (!match) return invalid(text, `not of the form name[argument]: ${quote(text)}`);
  const name = (match[1] ?? '').toLowerCase();
  const argument = (match[2] ?? '').trim();

  switch (name) {
    case 'search': {
      if (!available.has_search_bar)
        return invalid(text, 'search is not available on this page (no search bar)');
      const query = argument.replace(/\s+/g, ' ');
      if (query === '') return invalid(text, 'empty search query');
      // The store's own parser splits at the last '[', so a bracket in the query would corrupt it.
      if (/[[\]]/.test(query)) return invalid(text, 'search query must not contain [ or ]');
      return { valid: true, kind: 'search', action: `search[${query}]` };
    }
    case 'click': {
      const wanted = argument.toLowerCase();
      if (wanted === 'search')
        return invalid(text, 'click[search] is refused by the store; use search[<query>]');
      const clickable = available.clickables.find((c) => c.toLowerCase() === wanted);
      if (clickable === undefined)
        return invalid(text, `${quote(argument)} is not clickable on this page`);
      return { valid: true, kind: 'click', action: `click[${clickable}]` };
    }
    case 'think':
      return { valid: true, kind: 'think', action: `think[${argument}]` };
    default:
      return invalid(
        text,
        `unknown action ${quote(name)}; use search[...], click[...] or think[...]`,
      );
  }
}

function stripCodeTicks(text: string): string {
  const trimmed = text.trim();
  const ticked = /^`+([^`]*)`+$/.exec(trimmed);
  return ticked ? (ticked[1] ?? '').trim() : trimmed;
}

/**
 * Extracts the one action of a model reply. Accepted shapes:
 * - `Thought: ...` lines, then `Action: <action>` (the first Action line wins, so a model that goes on
 *   to invent observations and further actions is held to its first one);
 * - a reply whose only action-shaped line is the action itself (`think[...]`, `click[...]`, ...).
 * Anything else is invalid with a reason.
 */
export function parseAgentReply(reply: string, available: AvailableActions): ParsedReply {
  const reasoning: string[] = [];
  const text = reply.replace(REASONING_BLOCK, (_block, inner: string) => {
    reasoning.push(inner.trim());
    return '\n';
  });
  const lines = text.split(/\r?\n/);

  let candidate: string | undefined;
  let thoughtLines: string[];
  let parsed: ParsedAction | undefined;
  const actionLineIndex = lines.findIndex((line) => ACTION_LINE.test(line));
  if (actionLineIndex >= 0) {
    const inline = (ACTION_LINE.exec(lines[actionLineIndex] ?? '')?.[1] ?? '').trim();
    candidate =
      inline !== '' ? inline : lines.slice(actionLineIndex + 1).find((line) => line.trim() !== '');
    thoughtLines = lines.slice(0, actionLineIndex);
  } else {
    const shaped = lines.filter((line) => ACTION_SHAPE.test(stripCodeTicks(line)));
    if (shaped.length > 1)
      parsed = invalid(
        '',
        `${shaped.length} action-like lines and no "Action:" line; reply with one action`,
      );
    else candidate = shaped[0];
    thoughtLines = lines.filter((line) => line !== candidate);
  }

  if (parsed === undefined) {
    if (candidate !== undefined) parsed = parseAction(stripCodeTicks(candidate), available);
    else if (text.trim() === '' && reasoning.length === 0) parsed = invalid('', 'empty reply');
    else parsed = invalid('', 'no action found in the reply');
  }
  const thought = [...reasoning, thoughtLines.join('\n').replace(THOUGHT_PREFIX, '').trim()]
    .filter((part) => part !== '')
    .join('\n');
  return thought === '' ? parsed : { ...parsed, thought };
}
