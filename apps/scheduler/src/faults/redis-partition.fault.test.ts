import { describe, expect, it } from 'vitest';
import {
  blackholeRedisForOneWorker,
  readOnlyRedis,
  redisLosesJobRecords,
} from '@benchfleet/testing';
import { reportFault } from './fault-report.js';

// Redis that hangs for one worker, turns into a read-only replica, or loses part of a job, under a
// running fleet of real processes, on a Redis of the suite's own (never the machine's).

describe('faults of Redis that refuse nothing', () => {
  // Once: a Redis blackhole of 60 s left /healthz at ok.
  it('blackholed for one worker: it says why, holds nothing past the bound, and rejoins', async () => {
    const result = await blackholeRedisForOneWorker();
    reportFault(result);
    expect(result).toMatchObject({
      tasks: 200,
      stuck: 0,
      double: 0,
      lost: 0,
      summaryMatches: true,
      status: 'finished',
    });
    const checks = result.checks as {
      resumed: boolean;
      releasedAfterS: number;
      boundS: number;
      healthz: string;
      all: { workerLost: number };
    };
    expect(checks.healthz).toMatch(
      /^paused: Redis at redis:\/\/127\.0\.0\.1:\d+\/? does not answer/,
    );
    expect(checks.resumed).toBe(true);
    // Nothing runs on under the cut-off worker past the bound (with room for busy cores).
    expect(checks.releasedAfterS).toBeLessThan(checks.boundS + 15);
    // No worker was lost: every attempt the other worker took over says why it ended.
    expect(checks.all.workerLost).toBe(0);
  });

  // Once: two workers wrote about 510,000 error lines (325 MB) in 62 s.
  it('a read-only replica for a while: workers say why, log a handful of lines, and the run finishes', async () => {
    const result = await readOnlyRedis();
    reportFault(result);
    expect(result).toMatchObject({
      tasks: 300,
      stuck: 0,
      double: 0,
      lost: 0,
      summaryMatches: true,
      status: 'finished',
    });
    const checks = result.checks as { reasons: string[]; linesDuringFault: number[] };
    for (const reason of checks.reasons)
      expect(reason).toMatch(/^paused: Redis at redis:\/\/.* is a read-only replica \(READONLY/);
    for (const lines of checks.linesDuringFault) expect(lines).toBeLessThan(100);
  });

  // Once: a waiting job's record was left in no list or set (allkeys-lru); BullMQ ignored every
  // re-add of its id, so the keeper logged "re-enqueued" every 30 s and the task stayed queued.
  it('a job record in no state is replaced under its id, once, by resume and by the keeper; an evicting Redis is refused and warned of', async () => {
    const result = await redisLosesJobRecords();
    reportFault(result);
    expect(result).toMatchObject({
      tasks: 60,
      stuck: 0,
      double: 0,
      lost: 0,
      summaryMatches: true,
      status: 'finished',
    });
    expect(result.checks).toMatchObject({
      orphanStates: ['unknown', 'unknown'],
      afterResume: 'waiting',
      repairedOnce: 1,
      beforeKeeper: 'unknown',
      keeperRepaired: true,
      keeperSaid: true,
      workerLogged: true,
      mostAttempts: 1,
      refusedWorker: {
        code: 2,
        stderr: expect.stringMatching(
          /^scheduler: REDIS_URL: Redis at redis:\/\/127\.0\.0\.1:\d+\/? has maxmemory-policy allkeys-lru, .*set maxmemory-policy noeviction/,
        ),
      },
      refusedEnqueue: { code: 2, stderr: expect.stringMatching(/maxmemory-policy allkeys-lru/) },
      statusWarns: expect.stringMatching(/! Redis maxmemory-policy is allkeys-lru/),
    });
    const lines = (result.checks.resumeLines as string[]).join('\n');
    expect(lines).toMatch(/resumed run .*: [1-9]\d* task\(s\) re-enqueued/);
  });
});
