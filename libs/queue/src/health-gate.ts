import type { Redis } from 'ioredis';
import { errorMessage, redactSecrets } from '@benchfleet/core';

/** What a worker's health check finds: ready, or the thing that is down, its address and the cause. */
export type HealthReport = { ok: true } | { ok: false; reason: string };

export type HealthCheck = () => Promise<HealthReport>;

/**
 * The bound within which a worker that loses a service it needs (Postgres, Redis, its stack, its
 * artifact store) hands its jobs back, and the rhythm of checks that keeps it. Checks run every
 * `intervalMs`, each with a deadline of `timeoutMs`; a worker pauses at the first failed check and
 * hands its active jobs back once checks have failed for `failingForMs` (a blip shorter than that
 * costs no running episode). From the fault, the first check to see it starts within one interval;
 * the hand-back comes at the end of the first check that ends `failingForMs` after that start (at
 * most one interval and one deadline later), and moving the jobs back takes at most one more
 * deadline: interval + failingFor + interval + deadline + deadline ≤ bound. With the default
 * 30 s: checks every 5 s with 5 s deadlines, hand-back after 10 s of failing.
 */
export interface HandBackTimings {
  boundMs: number;
  intervalMs: number;
  timeoutMs: number;
  failingForMs: number;
}

export const DEFAULT_HAND_BACK_MS = 30_000;

export function handBackTimings(boundMs = DEFAULT_HAND_BACK_MS): HandBackTimings {
  const step = Math.min(5_000, Math.max(500, Math.floor(boundMs / 6)));
  return {
    boundMs,
    intervalMs: step,
    timeoutMs: step,
    failingForMs: Math.max(0, boundMs - 4 * step),
  };
}

/** Runs every check at once, each bounded by its own deadline; the first (in order) that fails is the report. */
export function allHealthy(checks: readonly HealthCheck[]): HealthCheck {
  return async () => {
    const reports = await Promise.all(
      checks.map((check) =>
        check().catch((error: unknown): HealthReport => ({
          ok: false,
          reason: errorMessage(error),
        })),
      ),
    );
    return reports.find((report) => !report.ok) ?? { ok: true };
  };
}

/**
 * Redis takes a write from this worker within `timeoutMs`: a blackholed Redis (no answer), a
 * read-only replica (READONLY) and one that is out of memory (OOM) fail it; a reconnecting
 * connection's queued command counts as no answer.
 */
export function redisHealth(
  redis: Redis,
  url: string,
  key: string,
  timeoutMs: number,
): HealthCheck {
  return async () => {
    let timer: NodeJS.Timeout | undefined;
    try {
      const wrote = redis.set(key, new Date().toISOString(), 'PX', 60_000);
      wrote.catch(() => undefined);
      await Promise.race([
        wrote,
        new Promise<never>(
          (_, reject) =>
            (timer = setTimeout(
              () =>
                reject(
                  new Error(
                    `no answer within ${Math.round(timeoutMs / 100) / 10} s; its connection is ${redis.status}`,
                  ),
                ),
              timeoutMs,
            )),
        ),
      ]);
      return { ok: true };
    } catch (error) {
      const message = errorMessage(error);
      const address = `Redis at ${redactSecrets(url)}`;
      if (message.startsWith('READONLY'))
        return { ok: false, reason: `${address} is a read-only replica (${message})` };
      if (message.startsWith('OOM'))
        return { ok: false, reason: `${address} is out of memory (${message})` };
      return { ok: false, reason: `${address} does not answer (${message})` };
    } finally {
      clearTimeout(timer);
    }
  };
}

/**
 * The worker's view of its health check: before jobs at most once per `maxAgeMs` while it passes
 * (a check per job would cost a write per episode), afresh after a job failed and on the
 * monitor's rhythm; checks asked for while one is under way share it; a check that does not end
 * within `timeoutMs` fails.
 */
export class HealthGate {
  private last: { report: HealthReport; at: number } | undefined;
  /** When `current()` last had a check made for it: a monitor's checks do not count there. */
  private lastAsked = 0;
  private underWay: Promise<HealthReport> | undefined;

  constructor(
    private readonly check: HealthCheck,
    private readonly maxAgeMs = 1_000,
    private readonly timeoutMs = 10_000,
  ) {}

  /**
   * Before a job: a check made for an earlier job within `maxAgeMs` serves while it and every
   * check since passed; otherwise a fresh one (a stack that died just after the monitor's last
   * look must not get the job).
   */
  async current(): Promise<HealthReport> {
    if (this.last?.report.ok && Date.now() - this.lastAsked < this.maxAgeMs)
      return this.last.report;
    this.lastAsked = Date.now();
    return this.recheck();
  }

  recheck(): Promise<HealthReport> {
    this.underWay ??= this.run().finally(() => (this.underWay = undefined));
    return this.underWay;
  }

  /** The last report, however old; undefined before the first check. */
  latest(): HealthReport | undefined {
    return this.last?.report;
  }

  private async run(): Promise<HealthReport> {
    let timer: NodeJS.Timeout | undefined;
    const report = await Promise.race([
      this.check().catch((error: unknown): HealthReport => ({
        ok: false,
        reason: errorMessage(error),
      })),
      new Promise<HealthReport>(
        (resolve) =>
          (timer = setTimeout(
            () =>
              resolve({
                ok: false,
                reason: `the health check did not finish within ${this.timeoutMs / 1000} s`,
              }),
            this.timeoutMs,
          )),
      ),
    ]);
    clearTimeout(timer);
    this.last = { report, at: Date.now() };
    return report;
  }
}
