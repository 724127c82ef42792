import { describe, expect, it } from 'vitest';
import { artifactStoreFull } from '@benchfleet/testing';
import { reportFault } from './fault-report.js';

// The artifact store fails under a running OSWorld worker (a directory on a small tmpfs of the
// suite's own, filled; the suite runs as root here and in CI).

describe('faults of the artifact store', () => {
  // Once: on a full disk 7 of 8 OSWorld tasks ended error/infra after 4 attempts each (28 Bytebot
  // tasks created, then cancelled) and needed `resume`; the worker never paused.
  it('full: the worker pauses naming the store and the cause, uses up no attempt, and finishes the run once there is room', async () => {
    const result = await artifactStoreFull();
    reportFault(result);
    expect(result).toMatchObject({
      tasks: 3,
      stuck: 0,
      double: 0,
      lost: 0,
      summaryMatches: true,
      status: 'finished',
    });
    const checks = result.checks as {
      healthz: string;
      createdWhileFull: number;
      runningWhileFull: number;
      bytebotTasks: number;
      handedBackAs: string;
      all: { workerLost: number; handedBack: number };
    };
    expect(checks.healthz).toMatch(
      /^paused: the artifact store file:\/\/.* is full \(ENOSPC: no space left on device/,
    );
    expect(checks.handedBackAs).toMatch(
      /^handed back: the artifact store file:\/\/.* is full \(ENOSPC: no space left on device/,
    );
    // The task that met the full disk was cancelled on its stack; no other was started meanwhile.
    expect(checks.createdWhileFull).toBe(0);
    expect(checks.runningWhileFull).toBe(0);
    // Three tasks, and the one run again after the hand-back.
    expect(checks.bytebotTasks).toBe(4);
    expect(checks.all).toMatchObject({ workerLost: 0, handedBack: 1 });
  });
});
