import { TransientError } from '@benchfleet/core';

/**
 * The desktop side of grading failed: the VM server, a download host, a setup step. Never a score
 * and never the agent's fault; the worker turns it into a retried attempt (a fresh desktop).
 */
export class GradingInfraError extends TransientError {
  override readonly name: string = 'GradingInfraError';
}

/** No answer from the VM server: connection refused or reset, the socket closed, or no answer by the deadline. */
export class VmServerUnreachableError extends GradingInfraError {
  override readonly name = 'VmServerUnreachableError';
  constructor(
    readonly endpoint: string,
    readonly attempts: number,
    readonly reason: string,
  ) {
    super(`OSWorld VM server: ${endpoint} got no answer (${attempts} attempt(s)): ${reason}`);
  }
}

/**
 * The VM server itself failed: a 5xx that is not one of the endpoint's own error answers (a proxy's
 * 502/503/504, Flask's page for an unhandled exception, a 200 without the documented body).
 */
export class VmServerFaultError extends GradingInfraError {
  override readonly name = 'VmServerFaultError';
  constructor(
    readonly endpoint: string,
    readonly status: number,
    readonly bodySnippet: string,
  ) {
    super(`OSWorld VM server: ${endpoint} failed with HTTP ${status}: ${bodySnippet}`);
  }
}

/** A file could not be downloaded (after the retries), or its content does not match its record. */
export class DownloadFailedError extends GradingInfraError {
  override readonly name = 'DownloadFailedError';
  constructor(
    readonly url: string,
    readonly reason: string,
    /** The last HTTP status, when the host answered. */
    readonly status: number | null,
  ) {
    super(`download of ${url} failed: ${reason}`);
  }
}

/**
 * A `config`/`postconfig` step failed, with upstream's message `Setup step N failed: _<type>_setup -
 * <cause>`. A task whose setup fails is an infra fault of the attempt, never a score.
 */
export class SetupFailedError extends GradingInfraError {
  override readonly name = 'SetupFailedError';
  constructor(
    readonly stepNumber: number,
    readonly stepType: string,
    override readonly cause: unknown,
  ) {
    super(
      `Setup step ${stepNumber} failed: _${stepType}_setup - ${cause instanceof Error ? cause.message : String(cause)}`,
    );
  }
}

/** What went wrong on the wire (fetch hides it in `cause`): `ECONNREFUSED: connect …`. */
export function transportReasonOf(error: unknown): string {
  const cause = error instanceof Error && error.cause instanceof Error ? error.cause : error;
  if (cause instanceof Error) {
    const code = (cause as { code?: unknown }).code;
    return typeof code === 'string' ? `${code}: ${cause.message}` : cause.message;
  }
  return String(cause);
}
