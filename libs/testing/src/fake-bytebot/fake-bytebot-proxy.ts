// The fake agent's proxy mode: how bytebot-agent talks to an OpenAI-compatible LLM proxy when
// BYTEBOT_LLM_PROXY_URL is set (bytebot-api.md §3; bytebot-agent src/proxy/proxy.service.ts and
// src/tasks/tasks.controller.ts at 99347e2), with the retry rules of its client, openai@5.8.2
// (src/client.ts: shouldRetry, retryRequest, calculateDefaultRetryTimeoutMillis).

/** The API key the real agent gives its OpenAI client in proxy mode: a proxy needs none. */
export const BYTEBOT_PROXY_API_KEY = 'dummy-key-for-proxy';

/** The context window the agent gives every proxy model (tasks.controller.ts). */
const BYTEBOT_PROXY_CONTEXT_WINDOW = 128_000;

/** A stand-in for AGENT_SYSTEM_PROMPT: the real one is long; only its place (first, as `system`) matters here. */
export const FAKE_BYTEBOT_SYSTEM_PROMPT =
  'You are Bytebot (fake), operating a virtual computer whose display measures 1280 x 960 pixels. Call set_task_status when the task is done.';

const emptyObject = { type: 'object', properties: {} } as const;
const coordinates = {
  type: 'object',
  properties: { x: { type: 'number' }, y: { type: 'number' } },
  required: ['x', 'y'],
} as const;

/** The 17 tools the agent offers, in its order (agent.tools.ts); schemas shortened, names exact. */
export const BYTEBOT_PROXY_TOOLS: readonly Record<string, unknown>[] = (
  [
    ['computer_move_mouse', 'Moves the mouse', { coordinates }],
    ['computer_trace_mouse', 'Moves the mouse along a path', { path: { type: 'array' } }],
    [
      'computer_click_mouse',
      'Clicks the mouse',
      { coordinates, button: { type: 'string' }, clickCount: { type: 'integer' } },
    ],
    ['computer_press_mouse', 'Presses or releases a mouse button', { press: { type: 'string' } }],
    ['computer_drag_mouse', 'Drags the mouse along a path', { path: { type: 'array' } }],
    ['computer_scroll', 'Scrolls', { direction: { type: 'string' } }],
    ['computer_type_keys', 'Types keys in order', { keys: { type: 'array' } }],
    ['computer_press_keys', 'Presses or releases keys', { keys: { type: 'array' } }],
    ['computer_type_text', 'Types text', { text: { type: 'string' } }],
    ['computer_paste_text', 'Pastes text', { text: { type: 'string' } }],
    ['computer_wait', 'Waits', { duration: { type: 'number' } }],
    ['computer_screenshot', 'Takes a screenshot', {}],
    [
      'computer_application',
      'Opens or focuses an application',
      { application: { type: 'string' } },
    ],
    ['computer_cursor_position', 'Reads the cursor position', {}],
    [
      'set_task_status',
      'Marks the task completed or needing help',
      { status: { type: 'string' }, description: { type: 'string' } },
    ],
    ['create_task', 'Creates a follow-up task', { description: { type: 'string' } }],
    ['computer_read_file', 'Reads a file', { path: { type: 'string' } }],
  ] as const
).map(([name, description, properties]) => ({
  type: 'function',
  function: {
    name,
    description,
    parameters: Object.keys(properties).length === 0 ? emptyObject : { type: 'object', properties },
  },
}));

type Block = Record<string, unknown>;

function imageUrl(source: unknown): string {
  const { media_type: mediaType, data } = (source ?? {}) as Record<string, unknown>;
  return `data:${String(mediaType)};base64,${String(data)}`;
}

/**
 * The agent's messages as its proxy client sends them: the system prompt first; a text block as a
 * user or assistant turn; every tool_use as an assistant turn of its own with one tool call; a
 * thinking block as an assistant turn with `reasoning_content`; a tool_result as `tool` turns (just
 * `screenshot` when it holds only images) and each of its images as a user turn with a base64
 * data URL at high detail. (User-action messages, which only a takeover makes, are not produced
 * by this fake.)
 */
export function bytebotChatMessages(
  systemPrompt: string,
  messages: readonly { role: 'USER' | 'ASSISTANT'; content: readonly Block[] }[],
): Record<string, unknown>[] {
  const chat: Record<string, unknown>[] = [{ role: 'system', content: systemPrompt }];
  for (const message of messages) {
    for (const block of message.content) {
      switch (block['type']) {
        case 'text':
          chat.push({
            role: message.role === 'USER' ? 'user' : 'assistant',
            content: block['text'],
          });
          break;
        case 'image':
          chat.push({
            role: 'user',
            content: [
              { type: 'image_url', image_url: { url: imageUrl(block['source']), detail: 'high' } },
            ],
          });
          break;
        case 'tool_use':
          chat.push({
            role: 'assistant',
            tool_calls: [
              {
                id: block['id'],
                type: 'function',
                function: { name: block['name'], arguments: JSON.stringify(block['input']) },
              },
            ],
          });
          break;
        case 'thinking':
          chat.push({ role: 'assistant', content: null, reasoning_content: block['thinking'] });
          break;
        case 'tool_result': {
          const parts = Array.isArray(block['content']) ? (block['content'] as Block[]) : [];
          if (parts.every((part) => part['type'] === 'image'))
            chat.push({ role: 'tool', tool_call_id: block['tool_use_id'], content: 'screenshot' });
          for (const part of parts) {
            if (part['type'] === 'text')
              chat.push({
                role: 'tool',
                tool_call_id: block['tool_use_id'],
                content: part['text'],
              });
            if (part['type'] === 'image')
              chat.push({
                role: 'user',
                content: [
                  { type: 'text', text: 'Screenshot' },
                  {
                    type: 'image_url',
                    image_url: { url: imageUrl(part['source']), detail: 'high' },
                  },
                ],
              });
          }
          break;
        }
      }
    }
  }
  return chat;
}

/** The content blocks the agent stores for a reply: text, thinking, tool_use (arguments parsed, `{}` when they are not JSON), refusal. */
export function replyContentBlocks(message: Record<string, unknown>): Block[] {
  const blocks: Block[] = [];
  const content = message['content'];
  if (typeof content === 'string' && content !== '') blocks.push({ type: 'text', text: content });
  const reasoning = message['reasoning_content'];
  if (typeof reasoning === 'string' && reasoning !== '')
    blocks.push({ type: 'thinking', thinking: reasoning, signature: reasoning });
  const calls = Array.isArray(message['tool_calls']) ? (message['tool_calls'] as Block[]) : [];
  for (const call of calls) {
    if (call['type'] !== 'function') continue;
    const fn = (call['function'] ?? {}) as Record<string, unknown>;
    let input: unknown = {};
    try {
      input = JSON.parse(typeof fn['arguments'] === 'string' ? fn['arguments'] || '{}' : '{}');
    } catch {
      input = {};
    }
    blocks.push({ type: 'tool_use', id: call['id'], name: fn['name'], input });
  }
  const refusal = message['refusal'];
  if (typeof refusal === 'string' && refusal !== '')
    blocks.push({ type: 'text', text: `Refusal: ${refusal}` });
  return blocks;
}

/** One chat completion request as the fake agent sent it, and what came of it. */
export interface FakeBytebotLlmCall {
  readonly taskId: string;
  readonly body: Readonly<Record<string, unknown>>;
  /** HTTP requests the client made for it: 1 plus its retries. */
  requests: number;
  /** The last HTTP status (0: no answer). */
  status: number;
  /** The Authorization header the client sent. */
  readonly authorization: string;
  /** The answer's body (the completion, or the error). */
  answer?: unknown;
  /** The content blocks the agent made of a completion. */
  blocks?: Block[];
  outcome: 'pending' | 'answered' | 'failed' | 'aborted';
}

const MAX_RETRIES = 2;
const SDK_TIMEOUT_MS = 600_000;

function shouldRetry(response: Response): boolean {
  const told = response.headers.get('x-should-retry');
  if (told === 'true') return true;
  if (told === 'false') return false;
  return [408, 409, 429].includes(response.status) || response.status >= 500;
}

/** The client's wait before retry `retry` (0-based): retry-after(-ms) under 60 s, else 0.5 s · 2^n up to 8 s, less up to 25 % jitter. */
function retryDelayMs(retry: number, headers: Headers | undefined): number {
  let wait: number | undefined;
  const millis = headers?.get('retry-after-ms');
  if (millis) {
    const value = Number.parseFloat(millis);
    if (!Number.isNaN(value)) wait = value;
  }
  const after = headers?.get('retry-after');
  if (after && !wait) {
    const seconds = Number.parseFloat(after);
    wait = Number.isNaN(seconds) ? Date.parse(after) - Date.now() : seconds * 1000;
  }
  if (wait !== undefined && wait && wait >= 0 && wait < 60_000) return wait;
  return Math.min(0.5 * 2 ** retry, 8) * (1 - Math.random() * 0.25) * 1000;
}

function pause(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(signal.reason);
    };
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

/**
 * `chat.completions.create` as the agent's client makes it: `POST {base}/chat/completions` with
 * the dummy key, up to 2 retries on connection errors, 408, 409, 429 and 5xx unless the answer
 * says `x-should-retry: false`, each after the wait the client computes. Fills `call` as it goes;
 * resolves with the completion's `choices[0].message`, or undefined when the call failed or was
 * aborted.
 */
export async function callBytebotProxy(
  proxyUrl: string,
  call: FakeBytebotLlmCall,
  signal: AbortSignal,
): Promise<Record<string, unknown> | undefined> {
  const endpoint = `${proxyUrl.replace(/\/+$/, '')}/chat/completions`;
  const payload = JSON.stringify(call.body);
  for (let retry = 0; ; retry += 1) {
    call.requests = retry + 1;
    let response: Response | undefined;
    let text = '';
    try {
      response = await fetch(endpoint, {
        method: 'POST',
        headers: {
          accept: 'application/json',
          'content-type': 'application/json',
          authorization: call.authorization,
          'x-stainless-retry-count': String(retry),
          'x-stainless-timeout': String(SDK_TIMEOUT_MS / 1000),
        },
        body: payload,
        signal: AbortSignal.any([signal, AbortSignal.timeout(SDK_TIMEOUT_MS)]),
      });
      text = await response.text();
    } catch {
      if (signal.aborted) {
        call.outcome = 'aborted';
        return undefined;
      }
      response = undefined;
    }
    call.status = response?.status ?? 0;
    if (response?.ok) {
      let body: unknown;
      try {
        body = JSON.parse(text);
      } catch {
        call.outcome = 'failed';
        return undefined;
      }
      call.answer = body;
      const choices = (body as { choices?: unknown }).choices;
      const message = Array.isArray(choices)
        ? (choices[0] as { message?: unknown } | undefined)?.message
        : undefined;
      if (typeof message !== 'object' || message === null) {
        call.outcome = 'failed';
        return undefined;
      }
      call.outcome = 'answered';
      return message as Record<string, unknown>;
    }
    if (response !== undefined) {
      try {
        call.answer = JSON.parse(text);
      } catch {
        call.answer = text;
      }
    }
    const retryable = response === undefined || shouldRetry(response);
    if (retry >= MAX_RETRIES || !retryable) {
      call.outcome = 'failed';
      return undefined;
    }
    try {
      await pause(retryDelayMs(retry, response?.headers), signal);
    } catch {
      call.outcome = 'aborted';
      return undefined;
    }
  }
}

/**
 * `GET /tasks/models` in proxy mode: `{proxy}/model/info`, each `data[]` entry mapped to
 * `{provider: 'proxy', name: litellm_params.model, title: model_name, contextWindow: 128000}`.
 * A non-2xx answer is a 502 ("Failed to fetch models from proxy: <statusText>"), anything else
 * that fails a 500 ("Error fetching models: <message>"), as the agent answers them.
 */
export async function fetchBytebotProxyModels(
  proxyUrl: string,
): Promise<
  | { ok: true; models: Record<string, unknown>[] }
  | { ok: false; status: 502 | 500; message: string }
> {
  try {
    // The agent's fetch has no deadline; the fake's is the client's 10 min, so no test waits forever.
    const response = await fetch(`${proxyUrl}/model/info`, {
      headers: { 'Content-Type': 'application/json' },
      signal: AbortSignal.timeout(SDK_TIMEOUT_MS),
    });
    if (!response.ok)
      return {
        ok: false,
        status: 502,
        message: `Failed to fetch models from proxy: ${response.statusText}`,
      };
    const body = (await response.json()) as { data: Record<string, unknown>[] };
    return {
      ok: true,
      models: body.data.map((entry) => ({
        provider: 'proxy',
        name: (entry['litellm_params'] as Record<string, unknown>)['model'],
        title: entry['model_name'],
        contextWindow: BYTEBOT_PROXY_CONTEXT_WINDOW,
      })),
    };
  } catch (error) {
    return {
      ok: false,
      status: 500,
      message: `Error fetching models: ${error instanceof Error ? error.message : String(error)}`,
    };
  }
}
