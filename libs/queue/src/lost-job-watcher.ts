import { Queue, QueueEvents } from 'bullmq';
import type { Logger } from '@benchfleet/core';
import { createRedisConnection } from './redis-connection.js';
import { taskPayloadSchema } from './job-catalog.js';

// BullMQ fails these jobs in Redis itself, so no processor of ours ever sees the failure.
const LOST_REASONS = /stalled more than allowable limit|started more than allowable limit/;

export interface LostJob {
  queue: string;
  jobId: string;
  runId: string;
  taskId: string;
  reason: string;
}

export interface LostJobWatcher {
  close(): Promise<void>;
}

/**
 * Reports task jobs that BullMQ failed on its own (a job whose workers kept dying), so their tasks
 * get an outcome and their runs can settle instead of waiting for a `scheduler resume`.
 */
export async function watchLostJobs(options: {
  redisUrl: string;
  prefix: string;
  queues: readonly string[];
  logger: Logger;
  onLost: (job: LostJob) => Promise<void>;
}): Promise<LostJobWatcher> {
  const connection = createRedisConnection(options.redisUrl, 'worker');
  const producerConnection = createRedisConnection(options.redisUrl, 'worker');
  const watchers = await Promise.all(
    options.queues.map(async (queueName) => {
      const eventsConnection = connection.duplicate();
      eventsConnection.on('error', () => undefined);
      const events = new QueueEvents(queueName, {
        connection: eventsConnection,
        prefix: options.prefix,
      });
      const queue = new Queue(queueName, {
        connection: producerConnection,
        prefix: options.prefix,
      });
      events.on('error', () => undefined);
      queue.on('error', () => undefined);
      events.on('failed', ({ jobId, failedReason }) => {
        if (!LOST_REASONS.test(failedReason)) return;
        void (async () => {
          const job = await queue.getJob(jobId);
          const payload = taskPayloadSchema.safeParse(job?.data);
          if (!payload.success) return;
          await options.onLost({
            queue: queueName,
            jobId,
            runId: payload.data.runId,
            taskId: payload.data.taskId,
            reason: `lost: ${failedReason}`,
          });
        })().catch((error: unknown) =>
          options.logger.error({ err: error, job: jobId }, 'could not record a lost job'),
        );
      });
      await events.waitUntilReady();
      return { events, eventsConnection, queue };
    }),
  );
  return {
    async close() {
      for (const { events, eventsConnection, queue } of watchers) {
        // Its blocking read would otherwise hold close() for up to its block timeout.
        eventsConnection.disconnect();
        await events.close();
        await queue.close();
      }
      connection.disconnect();
      producerConnection.disconnect();
    },
  };
}
