/**
 * What a provider's answer says about its limits. Read (names as OpenAI sends them; Azure OpenAI,
 * Groq, Together and vLLM's OpenAI server use the same ones):
 * - `retry-after-ms` (milliseconds), `retry-after` (seconds or an HTTP date): how long to wait;
 * - `x-ratelimit-limit-requests`, `x-ratelimit-limit-tokens`: the per-minute limits of the key;
 * - `x-ratelimit-remaining-requests`, `x-ratelimit-remaining-tokens`: what is left now;
 * - `x-ratelimit-reset-requests`, `x-ratelimit-reset-tokens`: time until the limit is back,
 *   as a Go-style duration (`1s`, `6m0s`, `20ms`, `1h2m3.5s`) or a bare number of seconds.
 */
export interface ProviderRateHints {
  readonly retryAfterMs?: number;
  readonly limitRequests?: number;
  readonly limitTokens?: number;
  readonly remainingRequests?: number;
  readonly remainingTokens?: number;
  readonly resetRequestsMs?: number;
  readonly resetTokensMs?: number;
}

/** Response headers as fetch (`Headers`), axios or node:http give them. */
export type HeaderSource =
  { get(name: string): string | null } | Readonly<Record<string, unknown>> | undefined;

function header(headers: HeaderSource, name: string): string | undefined {
  if (headers === undefined) return undefined;
  if (typeof headers.get === 'function') {
    const value = (headers as { get(name: string): string | null }).get(name);
    return value ?? undefined;
  }
  const record = headers as Readonly<Record<string, unknown>>;
  const value = record[name] ?? record[name.toLowerCase()];
  if (typeof value === 'string') return value;
  if (typeof value === 'number') return String(value);
  if (Array.isArray(value) && typeof value[0] === 'string') return value[0];
  return undefined;
}

const UNIT_MS: Readonly<Record<string, number>> = { h: 3_600_000, m: 60_000, s: 1000, ms: 1 };

/** `6m0s`, `1.5s`, `20ms`, `1h2m3s`, or a bare number of seconds; undefined when it is neither. */
export function parseResetDuration(text: string | undefined): number | undefined {
  const value = text?.trim();
  if (value === undefined || value === '') return undefined;
  if (/^\d+(\.\d+)?$/.test(value)) return Number(value) * 1000;
  if (!/^(\d+(\.\d+)?(ms|h|m|s))+$/.test(value)) return undefined;
  let total = 0;
  for (const match of value.matchAll(/(\d+(?:\.\d+)?)(ms|h|m|s)/g))
    total += Number(match[1]) * (UNIT_MS[match[2] ?? 's'] ?? 0);
  return Math.round(total);
}

function count(text: string | undefined): number | undefined {
  if (text === undefined || !/^\s*\d+\s*$/.test(text)) return undefined;
  return Number(text);
}

/** The wait a 429/503 asks for, in ms: `retry-after-ms`, else `retry-after`; undefined without either. */
function retryAfterMs(headers: HeaderSource, now = Date.now()): number | undefined {
  const millis = header(headers, 'retry-after-ms')?.trim();
  if (millis !== undefined && millis !== '' && Number.isFinite(Number(millis)))
    return Math.max(0, Number(millis));
  const value = header(headers, 'retry-after')?.trim();
  if (value === undefined || value === '') return undefined;
  if (/^\d+(\.\d+)?$/.test(value)) return Number(value) * 1000;
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

export function readRateHints(headers: HeaderSource, now = Date.now()): ProviderRateHints {
  const hints: {
    -readonly [K in keyof ProviderRateHints]: ProviderRateHints[K];
  } = {};
  const wait = retryAfterMs(headers, now);
  if (wait !== undefined) hints.retryAfterMs = wait;
  const fields = [
    ['limitRequests', count(header(headers, 'x-ratelimit-limit-requests'))],
    ['limitTokens', count(header(headers, 'x-ratelimit-limit-tokens'))],
    ['remainingRequests', count(header(headers, 'x-ratelimit-remaining-requests'))],
    ['remainingTokens', count(header(headers, 'x-ratelimit-remaining-tokens'))],
    ['resetRequestsMs', parseResetDuration(header(headers, 'x-ratelimit-reset-requests'))],
    ['resetTokensMs', parseResetDuration(header(headers, 'x-ratelimit-reset-tokens'))],
  ] as const;
  for (const [name, value] of fields) if (value !== undefined) hints[name] = value;
  return hints;
}

/**
 * How long every worker should hold off after a 429/503: its Retry-After, else the reset of the
 * limit that ran out (remaining 0), else the sooner reset, else `fallbackMs`. A successful answer
 * whose remaining count is 0 holds nothing off: the buckets pace the next calls, and OpenAI's reset
 * is the time to a full refill, far longer than the wait for the next call.
 */
export function holdOffMs(hints: ProviderRateHints, fallbackMs: number): number {
  if (hints.retryAfterMs !== undefined) return hints.retryAfterMs;
  const exhausted = [
    hints.remainingRequests === 0 ? hints.resetRequestsMs : undefined,
    hints.remainingTokens === 0 ? hints.resetTokensMs : undefined,
  ].filter((value): value is number => value !== undefined);
  if (exhausted.length > 0) return Math.max(...exhausted);
  const resets = [hints.resetRequestsMs, hints.resetTokensMs].filter(
    (value): value is number => value !== undefined,
  );
  return resets.length > 0 ? Math.min(...resets) : fallbackMs;
}
