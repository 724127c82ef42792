/**
 * The token estimate a call is charged before it is made, settled afterwards with the usage the
 * provider reports. Documented rule: a message costs ceil(chars / 4) tokens plus 4 for its role
 * and separators (OpenAI's rule of thumb: a token is about 4 characters of English), the reply
 * costs at most `max_tokens`. It only needs to be an upper bound most of the time: the settle
 * charges any difference.
 */
export const CHARS_PER_TOKEN = 4;
export const TOKENS_PER_MESSAGE = 4;

export interface TokenEstimate {
  readonly promptTokens: number;
  readonly maxTokens: number;
}

export function estimatePromptTokens(
  messages: readonly { readonly content: string | null }[],
): number {
  let tokens = 0;
  for (const message of messages)
    tokens += Math.ceil((message.content ?? '').length / CHARS_PER_TOKEN) + TOKENS_PER_MESSAGE;
  return tokens;
}

export function estimateCall(
  messages: readonly { readonly content: string | null }[],
  maxTokens: number,
): TokenEstimate {
  return { promptTokens: estimatePromptTokens(messages), maxTokens: Math.max(0, maxTokens) };
}

/** The tokens a call is charged before it runs. */
export function estimatedTotal(estimate: TokenEstimate): number {
  return Math.max(1, Math.ceil(estimate.promptTokens + estimate.maxTokens));
}
