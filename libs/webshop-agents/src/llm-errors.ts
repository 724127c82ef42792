import { PermanentError, TransientError } from '@benchfleet/core';

export interface LlmUnavailableDetails {
  readonly attempts: number;
  readonly status?: number;
  readonly code?: string;
  /** The server's last Retry-After, when it asked for a longer wait than the client may spend. */
  readonly retryAfterMs?: number;
}

/**
 * The endpoint could not answer after every retry (429, 5xx, network error, timeout). An
 * infrastructure fault: the job should be retried, the agent has not failed.
 * Carries no request data; the message is safe to log.
 */
export class LlmUnavailableError extends TransientError {
  override readonly name = 'LlmUnavailableError';
  readonly attempts: number;
  readonly status?: number;
  readonly code?: string;
  readonly retryAfterMs?: number;

  constructor(message: string, details: LlmUnavailableDetails) {
    super(message);
    this.attempts = details.attempts;
    if (details.status !== undefined) this.status = details.status;
    if (details.code !== undefined) this.code = details.code;
    if (details.retryAfterMs !== undefined) this.retryAfterMs = details.retryAfterMs;
  }
}

/**
 * The endpoint refused the request (4xx other than 408/429, or a redirect): wrong model, bad key,
 * malformed request. Retrying will not help. Carries no request data; the message is safe to log.
 */
export class LlmRequestError extends PermanentError {
  override readonly name = 'LlmRequestError';
  readonly status: number;

  constructor(message: string, status: number) {
    super(message);
    this.status = status;
  }
}
