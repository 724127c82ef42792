import { defineTaskJob } from '@benchfleet/queue';

/**
 * The job of the runtime's tests (worker-runtime.test.ts and its worker process); its queue and
 * name can be another's (QUEUE, JOB_NAME), for tests whose watchers look at that queue.
 */
export function runtimeTestJob(env: NodeJS.ProcessEnv = {}) {
  return defineTaskJob({
    name: env.JOB_NAME ?? 'runtime-test-task',
    queue: env.QUEUE ?? 'runtime-test',
    attempts: 5,
    backoff: { type: 'exponential', delay: 2_000 },
    deadlineMs: 60_000,
  });
}

export const RUNTIME_TEST_JOB = runtimeTestJob();
