import type {
  AgentDecision,
  AgentEpisode,
  EpisodeContext,
  WebshopAgent,
  WebshopObservation,
} from './webshop-agent.js';

const NAVIGATION_BUTTONS = new Set(['back to search', 'next >', '< prev']);

/** The instruction as a search query: no `Instruction:` prefix, no brackets (they would break `search[...]`), single spaces. */
export function instructionToQuery(instruction: string): string {
  return instruction
    .replace(/^\s*instruction\s*:/i, '')
    .replace(/[[\]]/g, ' ')
    .replace(/\s+/g, ' ')
    .trim();
}

/**
 * The WebShop paper's rule baseline: search the instruction text, click the first result, buy it
 * with whatever options are preselected (none). It reads only the available actions, so it is
 * stateless and deterministic.
 */
export class RuleAgent implements WebshopAgent {
  readonly name = 'rule';
  readonly kind = 'rule';

  start(context: EpisodeContext): AgentEpisode {
    const query = instructionToQuery(context.instruction);
    return {
      nextAction: async (observation) => {
        context.signal.throwIfAborted();
        const started = performance.now();
        const decision = decide(query, observation);
        return {
          ...decision,
          tokensIn: 0,
          tokensOut: 0,
          costUsd: 0,
          latencyMs: performance.now() - started,
        };
      },
    };
  }
}

type Choice = Pick<AgentDecision, 'action' | 'kind' | 'valid' | 'invalidReason' | 'thought'>;

function decide(query: string, { availableActions }: WebshopObservation): Choice {
  const { has_search_bar: hasSearchBar, clickables } = availableActions;
  if (hasSearchBar) {
    if (query === '')
      return {
        action: '',
        kind: 'invalid',
        valid: false,
        invalidReason: 'the instruction is empty',
      };
    return {
      action: `search[${query}]`,
      kind: 'search',
      valid: true,
      thought: 'search the instruction',
    };
  }
  if (clickables.includes('buy now')) {
    return {
      action: 'click[buy now]',
      kind: 'click',
      valid: true,
      thought: 'buy the first result',
    };
  }
  // Only a results page offers `next >`; its product links are the clickables that are not navigation.
  if (clickables.includes('next >')) {
    const first = clickables.find((c) => !NAVIGATION_BUTTONS.has(c));
    if (first === undefined) {
      return {
        action: '',
        kind: 'invalid',
        valid: false,
        invalidReason: 'the results page lists no product',
      };
    }
    return {
      action: `click[${first}]`,
      kind: 'click',
      valid: true,
      thought: 'open the first result',
    };
  }
  if (clickables.includes('< prev')) {
    return {
      action: 'click[< prev]',
      kind: 'click',
      valid: true,
      thought: 'return to the product page',
    };
  }
  return { action: '', kind: 'invalid', valid: false, invalidReason: 'nothing to do on this page' };
}
