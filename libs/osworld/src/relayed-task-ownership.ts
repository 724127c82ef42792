/**
 * Which Bytebot task an LLM call of the stack's agent comes from. Bytebot's agent sends its proxy
 * nothing but the conversation (bytebot-agent `proxy.service.ts`: `model`, `messages`, `tools`; the
 * API key is a constant), and it runs any task on its stack: one the worker did not create (made
 * beside the fleet, or left by a gone attempt) would be forwarded with the worker's key and billed
 * to the attempt. So the conversation tells whose call it is:
 *
 * - a call whose conversation holds assistant turns is the attempt's when one of them (a tool
 *   call id, which Bytebot keeps from the reply, or an assistant text) is a reply the relay gave
 *   one of this attempt's calls: another task's conversation never holds those;
 * - a call with no assistant turn yet (a task's first) is the attempt's once the attempt has asked
 *   for its Bytebot task and only if its first user message is that task's description (Bytebot
 *   sends the description, plus a space, as the task's first message); a call that comes while
 *   the task is being created waits for the create to end, so the agent's first call is never
 *   refused for coming early.
 *
 * Before the attempt asks for its task (while it waits, resets and sets up the desktop) no call is
 * its own. What cannot be told apart: another task created with the very same description while
 * the attempt's own has made no call yet.
 */
export class RelayedTaskOwnership {
  #task: { readonly description: string; readonly created: Promise<boolean> } | null = null;
  readonly #replyIds = new Set<string>();
  readonly #replyTexts = new Set<string>();

  constructor(
    /** How long a first call waits for the attempt's task to be created. */
    private readonly createWaitMs = 30_000,
  ) {}

  /** The attempt asks for its Bytebot task with this description; `created` settles with its id. */
  creatingTask(description: string, created: Promise<unknown>): void {
    this.#task = {
      description: description.trim(),
      created: created.then(
        () => true,
        () => false,
      ),
    };
  }

  /** A reply the relay gave one of the attempt's calls: it marks the attempt's conversation. */
  replied(reply: { readonly text: string | null; readonly toolCallIds: readonly string[] }): void {
    for (const id of reply.toolCallIds) this.#replyIds.add(id);
    if (reply.text !== null && reply.text.trim() !== '') this.#replyTexts.add(reply.text.trim());
  }

  /** null when the call (its request body) is the attempt's own task's; else why it is not. */
  async judge(body: Readonly<Record<string, unknown>>): Promise<string | null> {
    const conversation = conversationOf(body['messages']);
    if (conversation === null) return 'the request holds no conversation to tell its task by';
    if (conversation.assistantTurns > 0) {
      const ours =
        conversation.toolCallIds.some((id) => this.#replyIds.has(id)) ||
        conversation.assistantTexts.some((text) => this.#replyTexts.has(text));
      return ours
        ? null
        : "its conversation holds no reply given to the attempt's calls: another Bytebot task's";
    }
    const task = this.#task;
    if (task === null)
      return "the attempt's Bytebot task does not exist yet (the stack is being prepared for it)";
    if (!(await withinMs(task.created, this.createWaitMs)))
      return "the attempt's Bytebot task was not created";
    return conversation.firstUserText === task.description
      ? null
      : "its first message is not the attempt's task description: another Bytebot task's";
  }
}

interface Conversation {
  readonly assistantTurns: number;
  readonly toolCallIds: readonly string[];
  readonly assistantTexts: readonly string[];
  /** The first user message's text, trimmed; null when there is none. */
  readonly firstUserText: string | null;
}

/** The marks of a chat completion request's messages (OpenAI's shape, as Bytebot's proxy client sends them). */
function conversationOf(messages: unknown): Conversation | null {
  if (!Array.isArray(messages)) return null;
  let assistantTurns = 0;
  const toolCallIds: string[] = [];
  const assistantTexts: string[] = [];
  let firstUserText: string | null = null;
  for (const message of messages) {
    if (typeof message !== 'object' || message === null) continue;
    const {
      role,
      content,
      tool_calls: calls,
      tool_call_id: toolCallId,
    } = message as Record<string, unknown>;
    if (role === 'assistant') {
      assistantTurns += 1;
      const text = textOf(content);
      if (text !== '') assistantTexts.push(text);
      if (Array.isArray(calls))
        for (const call of calls) {
          const id = (call as { id?: unknown } | null)?.id;
          if (typeof id === 'string') toolCallIds.push(id);
        }
    } else if (role === 'tool' && typeof toolCallId === 'string') {
      toolCallIds.push(toolCallId);
    } else if (role === 'user' && firstUserText === null) {
      firstUserText = textOf(content);
    }
  }
  return { assistantTurns, toolCallIds, assistantTexts, firstUserText };
}

/** A message's text: a string, or its text parts joined; trimmed. */
function textOf(content: unknown): string {
  if (typeof content === 'string') return content.trim();
  if (!Array.isArray(content)) return '';
  return content
    .map((part) => {
      const { type, text } = (part ?? {}) as { type?: unknown; text?: unknown };
      return type === 'text' && typeof text === 'string' ? text : '';
    })
    .join('')
    .trim();
}

/** The promise's value when it settles within `ms`, else false. */
async function withinMs(promise: Promise<boolean>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), ms)));
  try {
    return await Promise.race([promise, late]);
  } finally {
    clearTimeout(timer);
  }
}
