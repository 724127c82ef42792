import type { FakeChatRequest, FakeLlmReply } from './chat-script.js';

const NAVIGATION = new Set(['back to search', 'next >', '< prev']);

/**
 * Plays the WebShop rule baseline from the prompt alone: search the instruction, open the first
 * result, buy it. It reads the first `Instruction: ...` line of the conversation and the
 * `search[...]` / `click[...]` lines under `Available actions:` in the last user message, which is
 * how the benchfleet LLM agent lays out its prompt.
 */
export function webshopRulePolicy(request: FakeChatRequest): FakeLlmReply {
  const lines = request.messages.flatMap((m) => m.content.split(/\r?\n/));
  const instruction = lines
    .map((line) => /^\s*instruction\s*:\s*(\S.*)$/i.exec(line)?.[1])
    .find((text) => text !== undefined)
    ?.replace(/[[\]]/g, ' ')
    .replace(/\s+/g, ' ')
    .trim();

  const lastUser = [...request.messages].reverse().find((m) => m.role === 'user')?.content ?? '';
  const userLines = lastUser.split(/\r?\n/).map((line) => line.trim());
  const header = userLines.findIndex((line) => /^available actions/i.test(line));
  const offered = header >= 0 ? userLines.slice(header + 1) : userLines;
  const canSearch = offered.some((line) => /^search\[.*\]$/.test(line));
  const clickables = offered.flatMap((line) => {
    const match = /^click\[(.*)\]$/.exec(line);
    return match?.[1] === undefined ? [] : [match[1]];
  });

  if (canSearch && instruction !== undefined && instruction !== '') {
    return `Thought: I will search for the instruction.\nAction: search[${instruction}]`;
  }
  if (clickables.includes('buy now'))
    return 'Thought: This is the first result; I buy it.\nAction: click[buy now]';
  if (clickables.includes('next >')) {
    const first = clickables.find((c) => !NAVIGATION.has(c));
    if (first !== undefined) return `Thought: I open the first result.\nAction: click[${first}]`;
  }
  if (clickables.includes('< prev'))
    return 'Thought: I go back to the product.\nAction: click[< prev]';
  return 'Action: think[I see nothing to do on this page.]';
}
