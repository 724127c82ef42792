import type { ChatMessage } from './chat-completions-client.js';
import type { AvailableActions } from './webshop-agent.js';

const REACT_SYSTEM_PROMPT = `You are shopping on the WebShop website for a customer. Buy the one product that best matches the customer's instruction: the kind of product, its attributes, the options it asks for (size, colour, flavour, ...) and the price limit.

Each turn shows the current page as text and the actions it allows. Reply with a short thought and exactly one action, in this form:
Thought: <one or two sentences>
Action: <action>

Actions:
search[<query>]  type a query into the search bar (only on a page that has one)
click[<name>]    click a button, a product id or an option value, exactly as listed
think[<note>]    reason without acting; the page stays the same

Select the options the instruction asks for before you click[buy now]. Clicking buy now ends the episode.`;

/** One past step: what the agent saw, what it replied, and what the store said about the reply. */
export interface TrajectoryTurn {
  readonly observation: string;
  readonly reply: string;
  /** Said before the next observation: `OK.` after a think, the reason after an invalid action. */
  readonly feedback?: string;
}

export interface PromptLimits {
  /** Past steps kept in the prompt; older ones are dropped (the instruction always stays). */
  readonly historySteps: number;
  /** Past observations are cut to this many characters; the current one is shown whole. */
  readonly maxObservationChars: number;
}

function clip(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max)} …(cut)`;
}

function renderAvailableActions(available: AvailableActions): string {
  const lines = available.has_search_bar ? ['search[<query>]'] : [];
  for (const clickable of available.clickables) {
    if (clickable !== 'search') lines.push(`click[${clickable}]`);
  }
  lines.push('think[<note>]');
  return `Available actions:\n${lines.join('\n')}`;
}

/**
 * ReAct as a chat: the instruction and the oldest kept observation open the conversation, each
 * past reply is an assistant turn, and the last user turn holds the current page and its actions.
 */
export function buildReactMessages(
  instruction: string,
  turns: readonly TrajectoryTurn[],
  current: { readonly observation: string; readonly availableActions: AvailableActions },
  limits: PromptLimits,
): ChatMessage[] {
  const kept = limits.historySteps > 0 ? turns.slice(-limits.historySteps) : [];
  const omitted = turns.length - kept.length;
  const opening = [`Instruction: ${instruction}`];
  if (omitted > 0) opening.push(`(${omitted} earlier step${omitted === 1 ? '' : 's'} omitted)`);

  const messages: ChatMessage[] = [{ role: 'system', content: REACT_SYSTEM_PROMPT }];
  let prefix = `${opening.join('\n')}\n\n`;
  const previous = turns[turns.length - kept.length - 1];
  if (previous?.feedback !== undefined) prefix += `${previous.feedback}\n`;
  for (const turn of kept) {
    messages.push({
      role: 'user',
      content: `${prefix}Observation:\n${clip(turn.observation, limits.maxObservationChars)}`,
    });
    messages.push({ role: 'assistant', content: turn.reply === '' ? '(empty reply)' : turn.reply });
    prefix = turn.feedback === undefined ? '' : `${turn.feedback}\n`;
  }
  messages.push({
    role: 'user',
    content: `${prefix}Observation:\n${current.observation}\n\n${renderAvailableActions(current.availableActions)}`,
  });
  return messages;
}
