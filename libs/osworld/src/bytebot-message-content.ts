import type { BytebotContentBlock, BytebotMessage } from './bytebot-api.js';

// How the original benchmark reads a message: its tool calls, its text, and the screenshot that
// the USER message after an ASSISTANT step carries.

export interface BytebotToolCall {
  name: string;
  input: unknown;
}

export function toolCallsOf(message: BytebotMessage): BytebotToolCall[] {
  return message.content
    .filter((block) => block.type === 'tool_use')
    .map((block) => ({
      name: typeof block['name'] === 'string' ? block['name'] : '',
      input: block['input'] ?? {},
    }));
}

/** The text blocks joined with newlines. */
export function textContentOf(message: BytebotMessage): string {
  return message.content
    .filter((block) => block.type === 'text')
    .map((block) => (typeof block['text'] === 'string' ? block['text'] : ''))
    .join('\n');
}

/** The base64 data of the last image, also looking inside `tool_result` blocks; null without one. */
export function lastImageOf(blocks: readonly unknown[]): string | null {
  let last: string | null = null;
  for (const block of blocks) {
    if (!isBlock(block)) continue;
    if (block.type === 'image') {
      const source = block['source'];
      if (
        isRecord(source) &&
        source['type'] === 'base64' &&
        typeof source['data'] === 'string' &&
        source['data'] !== ''
      ) {
        last = source['data'];
      }
    }
    if (block.type === 'tool_result' && Array.isArray(block['content'])) {
      last = lastImageOf(block['content']) ?? last;
    }
  }
  return last;
}

/** The `description` of the last `set_task_status` call among the messages: the agent's answer. */
export function finalStatusDescriptionOf(messages: readonly BytebotMessage[]): string | null {
  let answer: string | null = null;
  for (const message of messages) {
    if (message.role !== 'ASSISTANT') continue;
    for (const call of toolCallsOf(message)) {
      if (
        call.name === 'set_task_status' &&
        isRecord(call.input) &&
        typeof call.input['description'] === 'string'
      ) {
        answer = call.input['description'];
      }
    }
  }
  return answer;
}

function isBlock(value: unknown): value is BytebotContentBlock {
  return isRecord(value) && typeof value['type'] === 'string';
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
