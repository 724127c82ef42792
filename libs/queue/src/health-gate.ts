import { errorMessage } from '@benchfleet/core';

/** What a worker's health check finds: ready, or the thing that is down, its address and the cause. */
export type HealthReport = { ok: true } | { ok: false; reason: string };

export type HealthCheck = () => Promise<HealthReport>;

/** Runs every check in turn; the first that fails is the report. A check that throws fails with its message. */
export function allHealthy(checks: readonly HealthCheck[]): HealthCheck {
  return async () => {
    for (const check of checks) {
      const report = await check().catch((error: unknown): HealthReport => ({
        ok: false,
        reason: errorMessage(error),
      }));
      if (!report.ok) return report;
    }
    return { ok: true };
  };
}

/**
 * Asks a health check at most once per `maxAgeMs` while it passes (a check per job would cost a
 * query per episode), and every time while it fails or after a job failed.
 */
export class HealthGate {
  private last: { report: HealthReport; at: number } | undefined;

  constructor(
    private readonly check: HealthCheck,
    private readonly maxAgeMs = 1_000,
  ) {}

  async current(): Promise<HealthReport> {
    if (this.last?.report.ok && Date.now() - this.last.at < this.maxAgeMs) return this.last.report;
    return this.recheck();
  }

  async recheck(): Promise<HealthReport> {
    const report = await this.check().catch((error: unknown): HealthReport => ({
      ok: false,
      reason: errorMessage(error),
    }));
    this.last = { report, at: Date.now() };
    return report;
  }
}
