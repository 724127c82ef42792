export interface FakeChatMessage {
  readonly role: string;
  /** Text parts of an array content are joined with newlines; an assistant turn with only tool calls has ''. */
  readonly content: string;
  /** An assistant turn's `tool_calls`, as sent. */
  readonly toolCalls?: readonly FakeToolCall[];
}

/** A function call of an assistant turn (OpenAI's `tool_calls[]`, type `function`). */
export interface FakeToolCall {
  /** Default in replies: `call_fake_<n>`, unique within the fake. */
  readonly id?: string;
  readonly name: string;
  /** A JSON string, as OpenAI sends it; an object is serialised. */
  readonly arguments: string | Readonly<Record<string, unknown>>;
}

export interface FakeChatRequest {
  /** 0-based arrival order among chat completion requests, faulted ones included. */
  readonly index: number;
  readonly model: string;
  readonly messages: readonly FakeChatMessage[];
  readonly body: Readonly<Record<string, unknown>>;
  /** The Authorization header as received, so tests can check that a key is sent. */
  readonly authorization: string | undefined;
}

export type FakeLlmReply =
  | string
  | {
      readonly content: string | null;
      /** Function calls of the reply (`message.tool_calls`); finish_reason defaults to `tool_calls`. */
      readonly toolCalls?: readonly FakeToolCall[];
      readonly finishReason?: string;
      readonly promptTokens?: number;
      readonly completionTokens?: number;
      /** Leave `usage` out of the response, as some servers do. */
      readonly omitUsage?: boolean;
    };

type FakeLlmScriptFn = (request: FakeChatRequest) => FakeLlmReply | Promise<FakeLlmReply>;

/** A list is replied in order and its last entry repeats; a function answers each request. */
export type FakeLlmScript = readonly FakeLlmReply[] | FakeLlmScriptFn;
