import { describe, expect, it } from 'vitest';
import { keeperDownWhileAJobIsLost, restartRedis } from '@benchfleet/testing';
import { reportFault } from './fault-report.js';

// Redis restarted, and the keeper down, under a running fleet of real processes, on a Redis of the
// suite's own (never the machine's); each case ends when the fleet has converged by itself.

describe('faults of Redis', () => {
  // Once: a restart without persistence left status saying "queued, eta…" over empty queues for
  // ever, and the producer that gave up after three reconnect tries never summarised another run.
  it.each([false, true])(
    'restart (append-only: %s): every open task runs, once, and the run is summarised',
    async (appendOnly) => {
      const result = await restartRedis(appendOnly);
      reportFault(result);
      expect(result).toMatchObject({
        tasks: 300,
        stuck: 0,
        double: 0,
        lost: 0,
        summaryMatches: true,
        status: 'finished',
      });
      expect(result.checks).toMatchObject({ workersAlive: 2 });
    },
  );

  // Once: the lost-job watcher listened from `$` only, so a failure while it was down went unheard
  // and the task stayed running for ever.
  it('the keeper down while BullMQ fails a job as lost: back, it gives the task its outcome', async () => {
    const result = await keeperDownWhileAJobIsLost();
    reportFault(result);
    expect(result).toMatchObject({
      tasks: 1,
      stuck: 0,
      double: 0,
      lost: 1,
      summaryMatches: true,
      status: 'finished',
    });
    expect(result.checks.task).toMatchObject({
      status: 'error',
      error: expect.stringMatching(/^lost: job stalled more than allowable limit/),
    });
  });
});
