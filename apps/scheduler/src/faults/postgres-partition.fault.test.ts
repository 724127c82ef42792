import { describe, expect, it } from 'vitest';
import { blackholePostgresForOneWorker, readOnlyPostgres } from '@benchfleet/testing';
import { reportFault } from './fault-report.js';

// Postgres that hangs for one worker, or turns read-only for all, under a running fleet of real
// processes, on a Postgres of the suite's own (never the machine's).

describe('faults of Postgres that refuse nothing', () => {
  // Once: no deadline anywhere; a worker cut off by dropped packets kept 16 tasks `running` for
  // the whole 240 s partition, said nothing, and /healthz answered 200 ok.
  it('blackholed for one worker: it says why, hands its jobs back within the bound, and no attempt says "worker lost"', async () => {
    const result = await blackholePostgresForOneWorker();
    reportFault(result);
    expect(result).toMatchObject({
      tasks: 300,
      stuck: 0,
      double: 0,
      lost: 0,
      summaryMatches: true,
      status: 'finished',
    });
    const checks = result.checks as {
      handedBackAfterS: number;
      boundS: number;
      healthz: string;
      statusSaid: unknown;
      resumed: boolean;
      cutWorker: { workerLost: number; stillRunning: number };
      all: { workerLost: number };
    };
    expect(checks.healthz).toMatch(/^paused: Postgres at postgres:\/\/.* does not answer/);
    // `scheduler status` from elsewhere says it too.
    expect(checks.statusSaid).toMatchObject({
      state: 'paused',
      reason: expect.stringMatching(/^Postgres at .* does not answer/),
    });
    expect(checks.resumed).toBe(true);
    // The bound, with room for a machine whose cores are busy.
    expect(checks.handedBackAfterS).toBeLessThan(checks.boundS + 15);
    // Every attempt of the cut worker ended with its outcome or its real cause (the outcome of
    // one whose write reached Postgres before the partition counts; the others say 'handed back').
    expect(checks.cutWorker.stillRunning).toBe(0);
    // No worker was lost: no attempt says so.
    expect(checks.all.workerLost).toBe(0);
  });

  // Once: `select 1` passed, no worker paused, and all 1,183 waiting jobs used their 5 attempts in
  // about 30 s; without a keeper the run stayed at 337/1,500 done for good.
  it('read-only for everyone, with no keeper: workers pause and say why, no attempt is used up, the run finishes', async () => {
    const result = await readOnlyPostgres();
    reportFault(result);
    expect(result).toMatchObject({
      tasks: 300,
      stuck: 0,
      double: 0,
      lost: 0,
      summaryMatches: true,
      status: 'finished',
    });
    const checks = result.checks as {
      reasons: string[];
      failedAttempts: number;
      mostJobAttempts: number;
      all: { workerLost: number };
    };
    for (const reason of checks.reasons)
      expect(reason).toMatch(/^paused: Postgres at postgres:\/\/.* is read-only/);
    expect(checks.failedAttempts).toBe(0);
    // BullMQ counted one attempt per job, the one that finished it.
    expect(checks.mostJobAttempts).toBe(1);
    expect(checks.all.workerLost).toBe(0);
  });
});
