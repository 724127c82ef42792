import { Queue, type JobsOptions } from 'bullmq';
import type { Redis } from 'ioredis';
import { createRedisConnection } from './redis-connection.js';
import { jobCatalog, type JobName, type JobPayload, type QueueName } from './job-catalog.js';

const ADD_BULK_PAGE = 500;
const ADD_BULK_LANES = 4;

export interface EnqueueItem<N extends JobName> {
  payload: JobPayload<N>;
  jobId: string;
  options?: JobsOptions;
}

/** Channel on which `scheduler cancel` tells workers to abort the active jobs of a run. */
export function cancelChannel(prefix: string): string {
  return `${prefix}:benchfleet:cancel-run`;
}

/** Producer side of every queue: validates payloads against the catalog before they reach Redis. */
export class JobProducer {
  private readonly queues = new Map<QueueName, Queue>();
  readonly connection: Redis;

  constructor(
    redisUrl: string,
    readonly prefix: string,
  ) {
    this.connection = createRedisConnection(redisUrl, 'producer');
  }

  queue(name: QueueName): Queue {
    let queue = this.queues.get(name);
    if (!queue) {
      queue = new Queue(name, { connection: this.connection, prefix: this.prefix });
      queue.on('error', () => undefined);
      this.queues.set(name, queue);
    }
    return queue;
  }

  private jobOptions<N extends JobName>(name: N, item: EnqueueItem<N>): JobsOptions {
    return {
      removeOnComplete: { age: 24 * 3600, count: 10_000 },
      removeOnFail: { age: 7 * 24 * 3600 },
      ...jobCatalog[name].options,
      ...item.options,
      jobId: item.jobId,
    };
  }

  async enqueue<N extends JobName>(name: N, item: EnqueueItem<N>): Promise<void> {
    const definition = jobCatalog[name];
    const payload = definition.payload.parse(item.payload);
    await this.queue(definition.queue).add(name, payload, this.jobOptions(name, item));
  }

  /** Adds jobs with addBulk in pages, a few pages in flight at once; `onPage` reports progress. */
  async enqueueBulk<N extends JobName>(name: N, items: EnqueueItem<N>[], onPage?: (done: number) => void): Promise<void> {
    const definition = jobCatalog[name];
    const queue = this.queue(definition.queue);
    // Validate everything before the first job reaches Redis.
    const jobs = items.map((item) => ({ name, data: definition.payload.parse(item.payload), opts: this.jobOptions(name, item) }));
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

  /** Removes jobs that are not active (waiting, delayed, failed, completed); returns how many went. */
  async removeJobs(queueName: QueueName, jobIds: string[]): Promise<number> {
    const queue = this.queue(queueName);
    let removed = 0;
    for (const jobId of jobIds) {
      const job = await queue.getJob(jobId);
      if (!job) continue;
      if (await job.isActive()) continue;
      await job.remove();
      removed += 1;
    }
    return removed;
  }

  async publishCancel(runId: string): Promise<void> {
    await this.connection.publish(cancelChannel(this.prefix), runId);
  }

  async counts(queueName: QueueName): Promise<Record<string, number>> {
    return this.queue(queueName).getJobCounts('wait', 'active', 'delayed', 'prioritized', 'completed', 'failed');
  }

  async close(): Promise<void> {
    await Promise.all([...this.queues.values()].map((queue) => queue.close()));
    this.connection.disconnect();
  }
}
