import { describe, expect, it } from 'vitest';
import { restartPostgres } from '@benchfleet/testing';
import { reportFault } from './fault-report.js';

// Postgres restarted under a running fleet of real processes, on a Postgres of the suite's own
// (never the machine's); each case ends when the fleet has converged by itself.

describe('faults of Postgres', () => {
  // Once: every WebShop worker died of an unhandled 'error' (57P01) on a restart; after ~30 s down
  // the whole queue failed out and its tasks stayed queued for ever.
  it.each([10_000, 70_000])(
    'restart after %i ms down: workers pause, survive and finish the run',
    async (outageMs) => {
      const result = await restartPostgres(outageMs);
      reportFault(result);
      expect(result).toMatchObject({
        tasks: 400,
        stuck: 0,
        double: 0,
        lost: 0,
        summaryMatches: true,
        status: 'finished',
      });
      expect(result.checks).toMatchObject({ workersAlive: 2, workersThatPaused: 2 });
    },
    // Only a hang: the 10 s case took 501 s at load 39-48 (400 tasks, the fleet's start included).
    1_200_000,
  );
});
