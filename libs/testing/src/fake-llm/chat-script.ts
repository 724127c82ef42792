export interface FakeChatMessage {
  readonly role: string;
  /** Text parts of an array content are joined with newlines. */
  readonly content: string;
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
      readonly finishReason?: string;
      readonly promptTokens?: number;
      readonly completionTokens?: number;
      /** Leave `usage` out of the response, as some servers do. */
      readonly omitUsage?: boolean;
    };

export type FakeLlmScriptFn = (request: FakeChatRequest) => FakeLlmReply | Promise<FakeLlmReply>;

/** A list is replied in order and its last entry repeats; a function answers each request. */
export type FakeLlmScript = readonly FakeLlmReply[] | FakeLlmScriptFn;
