import type { Logger } from 'pino';
import { errorMessage } from './errors.js';

type Level = 'warn' | 'error' | 'info';

interface Window {
  /** Repeats since the line that opened the window. */
  count: number;
  level: Level;
  message: string;
  fields: Record<string, unknown>;
  timer: NodeJS.Timeout;
}

/** At most this many causes are counted apart; more share one line (a storm of distinct messages is a storm too). */
const MAX_CAUSES = 50;

/** The cause of an error without what changes from one occurrence to the next (ids, counts, addresses' ports). */
export function causeOf(error: unknown): string {
  return errorMessage(error)
    .replace(/[0-9a-f]{8,}/gi, '…')
    .replace(/\d+/g, '#')
    .slice(0, 200);
}

/**
 * Errors of one cause logged once per interval with a count: the first at once, the repeats
 * counted and told in one line when the interval ends. A Redis turned read-only made two workers
 * write 510,000 identical lines in a minute; with this they write a few. One per logger and
 * interval, shared by everything of a process that repeats (pool, connection and worker errors,
 * failed health checks, failed jobs).
 */
export class RepeatedLog {
  private readonly windows = new Map<string, Window>();

  constructor(
    private readonly logger: Logger,
    readonly intervalMs = 30_000,
  ) {}

  warn(cause: string, fields: Record<string, unknown>, message: string): void {
    this.log('warn', cause, fields, message);
  }

  error(cause: string, fields: Record<string, unknown>, message: string): void {
    this.log('error', cause, fields, message);
  }

  info(cause: string, fields: Record<string, unknown>, message: string): void {
    this.log('info', cause, fields, message);
  }

  private log(level: Level, cause: string, fields: Record<string, unknown>, message: string): void {
    const key = this.windows.has(cause) || this.windows.size < MAX_CAUSES ? cause : 'other causes';
    const open = this.windows.get(key);
    if (open) {
      open.count += 1;
      open.fields = fields;
      open.message = message;
      return;
    }
    this.logger[level](fields, message);
    const timer = setTimeout(() => this.close(key), this.intervalMs);
    timer.unref();
    this.windows.set(key, { count: 0, level, message, fields, timer });
  }

  /** Ends a window: its repeats are told, and while they go on the next window is counted too. */
  private close(key: string, final = false): void {
    const window = this.windows.get(key);
    if (!window) return;
    clearTimeout(window.timer);
    if (window.count === 0) {
      this.windows.delete(key);
      return;
    }
    const seconds = Math.round(this.intervalMs / 1000);
    this.logger[window.level](
      { ...window.fields, repeated: window.count, intervalS: seconds },
      `${window.message} (${window.count} more time(s) in the last ${seconds} s)`,
    );
    if (final) {
      this.windows.delete(key);
      return;
    }
    // A storm that goes on gets one line per interval, not two.
    window.count = 0;
    window.timer = setTimeout(() => this.close(key), this.intervalMs);
    window.timer.unref();
  }

  /** Tells the counts still open (at shutdown). */
  flush(): void {
    for (const key of [...this.windows.keys()]) this.close(key, true);
  }
}
