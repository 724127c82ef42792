import { Queue, type JobsOptions } from 'bullmq';
import type { Redis } from 'ioredis';
import { createRedisConnection, type RedisRole } from './redis-connection.js';
import type { JobDefinition } from './job-catalog.js';
import { connectedWorkerIds } from './worker-heartbeat.js';

const ADD_BULK_PAGE = 500;
const ADD_BULK_LANES = 4;
const REMOVE_PAGE = 1_000;

export interface EnqueueItem<P> {
  payload: P;
  jobId: string;
  options?: JobsOptions;
}

/**
 * Clears what is left of a job that no BullMQ state holds, so its id can be added again (BullMQ
 * ignores an add whose id has a record). One script, so nothing moves between the look and the
 * delete: a job waiting, delayed, prioritized, active or locked by a worker is live and left alone
 * (-1); a finished one or a record in no state (a Redis that evicted part of it) is deleted (1);
 * nothing there at all is 0. Keys: the six live states, completed, failed, then the job's hash and
 * its lock; the rest of the job's keys follow. Each is looked at by its type, as keys a state has
 * never held do not exist.
 */
const CLEAR_DEAD_JOB = `
local id = ARGV[1]
local function holds(key)
  local kind = redis.call('TYPE', key)['ok']
  if kind == 'list' then return redis.call('LPOS', key, id) ~= false end
  if kind == 'zset' then return redis.call('ZSCORE', key, id) ~= false end
  if kind == 'set' then return redis.call('SISMEMBER', key, id) == 1 end
  return false
end
for i = 1, 6 do
  if holds(KEYS[i]) then return -1 end
end
if redis.call('EXISTS', KEYS[10]) == 1 then return -1 end
redis.call('ZREM', KEYS[7], id)
redis.call('ZREM', KEYS[8], id)
local deleted = 0
for i = 9, #KEYS do
  deleted = deleted + redis.call('DEL', KEYS[i])
end
if deleted > 0 then return 1 end
return 0
`;

const LIVE_STATES = ['wait', 'paused', 'active', 'prioritized', 'delayed', 'waiting-children'];
const JOB_SUBKEYS = ['lock', 'logs', 'dependencies', 'processed', 'failed', 'unsuccessful'];

/** What `clearDeadJobs` found of a job: live (left alone), cleared (its old record deleted), absent. */
export type DeadJobClearing = 'live' | 'cleared' | 'absent';

/** Channel on which `scheduler cancel` tells workers to abort the active jobs of a run. */
export function cancelChannel(prefix: string): string {
  return `${prefix}:benchfleet:cancel-run`;
}

/**
 * Producer side of every queue: validates payloads against their job definition before they
 * reach Redis. A CLI's producer fails fast when Redis is gone; a worker's (`role: 'worker'`)
 * reconnects for as long as it lives.
 */
export class JobProducer {
  private readonly queues = new Map<string, Queue>();
  readonly connection: Redis;

  constructor(
    redisUrl: string,
    readonly prefix: string,
    role: RedisRole = 'producer',
  ) {
    this.connection = createRedisConnection(redisUrl, role);
  }

  queue(name: string): Queue {
    let queue = this.queues.get(name);
    if (!queue) {
      queue = new Queue(name, { connection: this.connection, prefix: this.prefix });
      queue.on('error', () => undefined);
      this.queues.set(name, queue);
    }
    return queue;
  }

  private jobOptions<P>(job: JobDefinition<P>, item: EnqueueItem<P>): JobsOptions {
    return {
      removeOnComplete: { age: 24 * 3600, count: 10_000 },
      removeOnFail: { age: 7 * 24 * 3600 },
      ...job.options,
      ...item.options,
      jobId: item.jobId,
    };
  }

  async enqueue<P>(job: JobDefinition<P>, item: EnqueueItem<P>): Promise<void> {
    const payload = job.payload.parse(item.payload);
    await this.queue(job.queue).add(job.name, payload, this.jobOptions(job, item));
  }

  /** Adds jobs with addBulk in pages, a few pages in flight at once; `onPage` reports progress. */
  async enqueueBulk<P>(
    job: JobDefinition<P>,
    items: readonly EnqueueItem<P>[],
    onPage?: (done: number) => void,
  ): Promise<void> {
    const queue = this.queue(job.queue);
    // Validate everything before the first job reaches Redis.
    const jobs = items.map((item) => ({
      name: job.name,
      data: job.payload.parse(item.payload),
      opts: this.jobOptions(job, item),
    }));
    let next = 0;
    let done = 0;
    const lane = async () => {
      while (next < jobs.length) {
        const page = jobs.slice(next, next + ADD_BULK_PAGE);
        next += ADD_BULK_PAGE;
        await queue.addBulk(page);
        done += page.length;
        onPage?.(done);
      }
    };
    await Promise.all(Array.from({ length: ADD_BULK_LANES }, lane));
  }

  /**
   * Removes the jobs that are not active (waiting, delayed, failed, completed) and returns how many
   * went. BullMQ's remove script refuses a locked (active) job itself, so there is no read before
   * the write; the removals of a page are sent at once, one round trip per page.
   */
  async removeJobs(queueName: string, jobIds: readonly string[]): Promise<number> {
    const queue = this.queue(queueName);
    let removed = 0;
    for (let i = 0; i < jobIds.length; i += REMOVE_PAGE) {
      const codes = await Promise.all(
        jobIds
          .slice(i, i + REMOVE_PAGE)
          .map((jobId) => queue.remove(jobId, { removeChildren: false }).catch(notRemoved)),
      );
      removed += codes.filter((code) => code === 1).length;
    }
    return removed;
  }

  /**
   * Makes room to add each of `jobIds` again (see CLEAR_DEAD_JOB): a live job is left alone; a
   * finished job, or the record of one that Redis left in no state, is deleted, atomically, so
   * two keepers or resumes at once cannot delete a job the other just added and a worker took.
   */
  async clearDeadJobs(
    queueName: string,
    jobIds: readonly string[],
  ): Promise<Map<string, DeadJobClearing>> {
    const queue = this.queue(queueName);
    const keys = queue.keys as Record<string, string>;
    const states = [...LIVE_STATES, 'completed', 'failed'].map((state) => keys[state] ?? '');
    const found = new Map<string, DeadJobClearing>();
    for (let i = 0; i < jobIds.length; i += REMOVE_PAGE) {
      const page = jobIds.slice(i, i + REMOVE_PAGE);
      const codes = await Promise.all(
        page.map((jobId) => {
          const jobKey = `${keys[''] ?? ''}${jobId}`;
          const jobKeys = [jobKey, ...JOB_SUBKEYS.map((sub) => `${jobKey}:${sub}`)];
          return this.connection.eval(
            CLEAR_DEAD_JOB,
            states.length + jobKeys.length,
            ...states,
            ...jobKeys,
            jobId,
          ) as Promise<number>;
        }),
      );
      page.forEach((jobId, index) =>
        found.set(jobId, codes[index] === -1 ? 'live' : codes[index] === 1 ? 'cleared' : 'absent'),
      );
    }
    return found;
  }

  async publishCancel(runId: string): Promise<void> {
    await this.connection.publish(cancelChannel(this.prefix), runId);
  }

  /** The ids (BullMQ worker names) of the workers connected to a queue now. */
  async connectedWorkers(queueName: string): Promise<ReadonlySet<string>> {
    return connectedWorkerIds(this.queue(queueName));
  }

  /**
   * When BullMQ will run each of these delayed jobs again (ms since the epoch), read from its
   * delayed set; jobs not waiting out a delay are absent from the map.
   */
  async delayedUntil(queueName: string, jobIds: readonly string[]): Promise<Map<string, number>> {
    const until = new Map<string, number>();
    if (jobIds.length === 0) return until;
    const scores = await this.connection.zmscore(
      this.queue(queueName).keys.delayed ?? '',
      ...jobIds,
    );
    for (const [index, score] of scores.entries()) {
      const jobId = jobIds[index];
      // BullMQ's score: the timestamp times 0x1000, plus a counter for jobs due in the same ms.
      if (score !== null && jobId !== undefined)
        until.set(jobId, Math.floor(Number(score) / 0x1000));
    }
    return until;
  }

  async counts(queueName: string): Promise<Record<string, number>> {
    return this.queue(queueName).getJobCounts(
      'wait',
      'active',
      'delayed',
      'prioritized',
      'completed',
      'failed',
    );
  }

  async close(): Promise<void> {
    await Promise.all([...this.queues.values()].map((queue) => queue.close()));
    this.connection.disconnect();
  }
}

/** A script's refusal (the job is locked, or gone) is an answer; a lost connection is not. */
function notRemoved(error: unknown): number {
  if (typeof (error as { code?: unknown }).code === 'number') return 0;
  throw error;
}
