import { describe, expect, it } from 'vitest';
import {
  cancelDuringARun,
  desktopDiesMidTask,
  killedWorkerNoticed,
  killOsworldWorker,
  killWebshopWorker,
  resumesDuringARun,
} from '@benchfleet/testing';
import { reportFault } from './fault-report.js';

// Faults of the workers, each on a fleet of real processes with servers of its own; each case ends
// when the fleet has converged by itself, with no command typed by anyone.

describe('faults of the workers', () => {
  it('kill -9 a WebShop worker: its episodes run again elsewhere, every task settles once', async () => {
    const result = await killWebshopWorker();
    reportFault(result);
    expect(result).toMatchObject({
      tasks: 200,
      stuck: 0,
      double: 0,
      lost: 0,
      summaryMatches: true,
      status: 'finished',
    });
  });

  // Once: the redelivered attempt ran on the other stack and "cancelled" the leftover there (404),
  // the leftover ran on, the stack's next task waited behind it and ended as a final `cancelled`.
  it('kill -9 an OSWorld worker mid-task: the task runs again elsewhere; back, the stack cleans up its leftover first', async () => {
    const result = await killOsworldWorker();
    reportFault(result);
    expect(result).toMatchObject({
      tasks: 6,
      stuck: 0,
      double: 0,
      lost: 0,
      summaryMatches: true,
      status: 'finished',
    });
    expect(result.checks).toMatchObject({
      orphanStillRunningAfterKill: true,
      rerunOn: 'stack-b',
      orphanOnItsStack: 'CANCELLED',
      cancelsSentToTheOtherStack: 0,
      nextTasksOnStackA: ['success/stack-a/7', 'success/stack-a/7'],
      mostRunningAtOnceOnA: 1,
    });
  });

  // Once: resume read the open tasks, then put back tasks that had finished meanwhile (44 of 2,000).
  it('three resumes during a run: no task that has its outcome runs again', async () => {
    const result = await resumesDuringARun();
    reportFault(result);
    expect(result).toMatchObject({
      tasks: 400,
      stuck: 0,
      double: 0,
      lost: 0,
      summaryMatches: true,
      status: 'finished',
    });
  });

  // Once: cancelled tasks got a later failed attempt and steps written after the cancel.
  it('cancel during a run: no step, attempt or outcome is written for the run after it', async () => {
    const result = await cancelDuringARun();
    reportFault(result);
    expect(result).toMatchObject({
      tasks: 300,
      stuck: 0,
      double: 0,
      summaryMatches: true,
      status: 'cancelled',
    });
    expect(result.checks).toMatchObject({
      stepsAfterCancel: 0,
      attemptsAfterCancel: 0,
      runningAttempts: 0,
    });
  });

  // Once: BullMQ's 30 s lock and 30 s stalled interval; a kill -9 was noticed after 68 s.
  it('kill -9 a worker on its own lock settings: another takes its jobs within the stated bound', async () => {
    const result = await killedWorkerNoticed();
    reportFault(result);
    expect(result).toMatchObject({
      tasks: 4,
      stuck: 0,
      double: 0,
      lost: 0,
      summaryMatches: true,
      status: 'finished',
    });
    // The stated bound (LOST_WORKER_BOUND_MS, 20 s), and 5 s for a busy machine's timers, on
    // Postgres's clock from the kill to the serving rescuer's last attempt; BullMQ's defaults: 15-60 s.
    expect(result.checks['takeoverSeconds']).toBeLessThanOrEqual(25);
  });

  // Once: bytebotd died mid-task; the agent went on with tool errors and no screenshots until the
  // step limit, and the task was recorded as the agent's (cancelled). The worker probed its
  // desktop only before each task.
  it('a desktop dies mid-task: the attempt ends as infra, the task runs on another stack, the stack pauses and comes back', async () => {
    const result = await desktopDiesMidTask();
    reportFault(result);
    expect(result).toMatchObject({
      tasks: 6,
      stuck: 0,
      double: 0,
      lost: 0,
      summaryMatches: true,
      status: 'finished',
    });
    expect(result.checks).toMatchObject({
      task: 'success/stack-b',
      attempts: [
        // The desktop's cause, never another service's (a Postgres outage was once read into it),
        // with the episode's evidence (unless the worker's health monitor handed the job back first).
        expect.stringMatching(
          /^stack-a: error\/infra: (?!.*Postgres).*the Bytebot desktop at \S+ does not answer \(ECONNREFUSED\)/,
        ),
        'stack-b: success/-: ',
      ],
      orphanOnItsStack: 'CANCELLED',
      nextTasks: ['success/stack-a', 'success/stack-a'],
    });
    // Two steps with the desktop alive, two that show it dead, and what the agent takes while the
    // episode probes and cancels; the worker's health monitor alone hands the job back after ~16.
    expect(result.checks['stepsOfTheDeadDesktop']).toBeLessThanOrEqual(8);
  });
});
