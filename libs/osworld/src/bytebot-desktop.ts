import { errorMessage } from '@benchfleet/core';

/** A probe gets this long to be answered; a desktop slower than this is taken for a frozen one. */
const DESKTOP_PROBE_TIMEOUT_MS = 10_000;

/**
 * The stack's desktop daemon (bytebotd), asked only whether it can act. The probe is a
 * `cursor_position` action: it needs bytebotd and the display it drives, moves and shows nothing,
 * and answers a small `{x, y}` (a GET of some page would only prove that an HTTP server is up).
 */
export class BytebotDesktopClient {
  readonly origin: string;
  private readonly endpoint: string;

  constructor(
    baseUrl: string,
    private readonly timeoutMs = DESKTOP_PROBE_TIMEOUT_MS,
  ) {
    this.origin = new URL(baseUrl).origin;
    this.endpoint = `${baseUrl.replace(/\/+$/, '')}/computer-use`;
  }

  /** Why the desktop cannot act now (its address and the cause), or null when it answers. */
  async healthProblem(options: { signal?: AbortSignal } = {}): Promise<string | null> {
    const signals = [AbortSignal.timeout(this.timeoutMs)];
    if (options.signal) signals.push(options.signal);
    try {
      const response = await fetch(this.endpoint, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ action: 'cursor_position' }),
        signal: AbortSignal.any(signals),
      });
      const body = (await response.json().catch(() => undefined)) as
        { x?: unknown; y?: unknown } | undefined;
      if (!response.ok) return this.problem(`HTTP ${response.status}`);
      if (typeof body?.x !== 'number' || typeof body.y !== 'number')
        return this.problem('its cursor_position answer has no x and y');
      return null;
    } catch (error) {
      const cause =
        error instanceof Error && error.name === 'TimeoutError'
          ? `no answer within ${this.timeoutMs / 1000} s`
          : causeOf(error);
      return this.problem(cause);
    }
  }

  private problem(cause: string): string {
    return `the Bytebot desktop at ${this.origin} does not answer (${cause})`;
  }
}

/** fetch's own message is "fetch failed"; the reason (ECONNREFUSED, …) is its cause. */
function causeOf(error: unknown): string {
  const cause =
    error instanceof Error ? (error.cause as { code?: unknown } | undefined) : undefined;
  if (cause && typeof cause.code === 'string') return cause.code;
  return errorMessage(cause ?? error);
}
