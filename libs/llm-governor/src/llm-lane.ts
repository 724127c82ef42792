import { createHmac } from 'node:crypto';
import { normalizeProvider } from './llm-limits.js';

/** What a limit belongs to: one provider endpoint, one API key, one model. */
export interface LlmLane {
  /** The OpenAI-style base URL the call goes to. */
  readonly provider: string;
  /** Never stored or logged: only its fingerprint is. */
  readonly apiKey?: string;
  readonly model: string;
}

/** Whom a call is for: its cost and tokens go to this attempt, its task and its run. */
export interface LlmAttribution {
  readonly runId: string;
  readonly taskId: string;
  readonly attempt: number;
}

/** Domain separation for the HMAC; a fleet may add its own secret so fingerprints cannot be tested offline. */
const FINGERPRINT_CONTEXT = 'benchfleet/llm-key-fingerprint/v1';

/**
 * The identity of (provider, API key) in Redis keys, logs and metrics: 12 hex digits of an
 * HMAC-SHA256, so the key itself is never written anywhere. Every process of a fleet computes the
 * same fingerprint for the same key (and secret). No key: `nokey-` and 6 digits of the provider's.
 */
export function keyFingerprint(provider: string, apiKey: string | undefined, secret = ''): string {
  const hmac = createHmac('sha256', `${FINGERPRINT_CONTEXT}\n${secret}`)
    .update(`${normalizeProvider(provider)}\n${apiKey ?? ''}`)
    .digest('hex');
  return apiKey === undefined || apiKey === '' ? `nokey-${hmac.slice(0, 6)}` : hmac.slice(0, 12);
}

/** A lane as the governor names it: never holds the key. */
export interface LaneIdentity {
  /** `<fingerprint>:<model>`, what Redis keys carry. */
  readonly id: string;
  readonly provider: string;
  readonly keyFingerprint: string;
  readonly model: string;
}

export function laneIdentity(lane: LlmLane, secret = ''): LaneIdentity {
  const provider = normalizeProvider(lane.provider);
  const fingerprint = keyFingerprint(provider, lane.apiKey, secret);
  return {
    id: `${fingerprint}:${encodeURIComponent(lane.model)}`,
    provider,
    keyFingerprint: fingerprint,
    model: lane.model,
  };
}
