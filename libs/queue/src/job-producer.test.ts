import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { useTestServices } from '@benchfleet/testing';
import { JobProducer } from './job-producer.js';
import { defineTaskJob } from './job-catalog.js';

const RUNTIME_TEST_JOB = defineTaskJob({
  name: 'runtime-test-task',
  queue: 'runtime-test',
  attempts: 5,
  backoff: { type: 'exponential', delay: 2_000 },
  deadlineMs: 60_000,
});

const services = useTestServices();
let sut: JobProducer;

beforeAll(() => {
  sut = new JobProducer(services.redisUrl, services.prefix);
});
afterAll(async () => {
  await sut.close();
});

const payload = (taskId: string) => ({ runId: 'run-dead', taskId });

describe('JobProducer.clearDeadJobs', () => {
  // Once: a waiting job's record was left in no list or set (an evicting Redis); BullMQ ignored
  // every re-add of its id, so the task stayed queued for ever.
  it('clears a record in no state and a finished job, leaves live and locked jobs, and says which', async () => {
    const queue = sut.queue(RUNTIME_TEST_JOB.queue);
    for (const id of ['orphan', 'waiting', 'locked', 'finished'])
      await sut.enqueue(RUNTIME_TEST_JOB, { payload: payload(id), jobId: `dead__${id}` });
    const redis = sut.connection;
    const key = (suffix: string) => `${services.prefix}:${RUNTIME_TEST_JOB.queue}:${suffix}`;
    // What eviction leaves: the hash, in no state.
    await redis.lrem(key('wait'), 0, 'dead__orphan');
    // A worker holds this one: in no list for an instant of a script, but its lock says so.
    await redis.lrem(key('wait'), 0, 'dead__locked');
    await redis.set(key('dead__locked:lock'), 'token', 'PX', 60_000);
    await redis.lrem(key('wait'), 0, 'dead__finished');
    await redis.zadd(key('completed'), Date.now(), 'dead__finished');

    const found = await sut.clearDeadJobs(RUNTIME_TEST_JOB.queue, [
      'dead__orphan',
      'dead__waiting',
      'dead__locked',
      'dead__finished',
      'dead__never',
    ]);
    expect(Object.fromEntries(found)).toEqual({
      dead__orphan: 'cleared',
      dead__waiting: 'live',
      dead__locked: 'live',
      dead__finished: 'cleared',
      dead__never: 'absent',
    });
    expect(await redis.exists(key('dead__orphan'))).toBe(0);
    expect(await redis.zscore(key('completed'), 'dead__finished')).toBeNull();
    // Added again under the same id, it waits; a second clearing finds it live and keeps it.
    await sut.enqueue(RUNTIME_TEST_JOB, { payload: payload('orphan'), jobId: 'dead__orphan' });
    expect(await queue.getJobState('dead__orphan')).toBe('waiting');
    expect(
      (await sut.clearDeadJobs(RUNTIME_TEST_JOB.queue, ['dead__orphan'])).get('dead__orphan'),
    ).toBe('live');
    const waiting = await redis.lrange(key('wait'), 0, -1);
    expect(waiting.filter((id) => id === 'dead__orphan')).toHaveLength(1);
  });
});
