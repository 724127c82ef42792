import { z } from 'zod';
import type { JobsOptions } from 'bullmq';

// Queue and job names are persisted in Redis: never rename them.
export const QUEUE_NAMES = ['osworld', 'webshop', 'aggregate'] as const;
export type QueueName = (typeof QUEUE_NAMES)[number];

const id = z.string().min(1).max(200).regex(/^[^:]+$/, 'must not contain ":"');

const taskPayload = z.object({ runId: id, taskId: id }).strict();

export const jobCatalog = {
  'osworld-task': {
    queue: 'osworld',
    payload: taskPayload,
    // Infra faults (a dead stack, Postgres down) are retried slowly: a stack restart takes minutes.
    options: { attempts: 4, backoff: { type: 'exponential', delay: 30_000 } },
    deadlineMs: 3 * 60 * 60 * 1000,
  },
  'webshop-episode': {
    queue: 'webshop',
    payload: taskPayload.extend({ goalIndex: z.number().int().nonnegative() }).strict(),
    options: { attempts: 5, backoff: { type: 'exponential', delay: 2_000 } },
    deadlineMs: 30 * 60 * 1000,
  },
  'aggregate-run': {
    queue: 'aggregate',
    payload: z.object({ runId: id }).strict(),
    // Removed when done so that the same deterministic id can run again after a resume.
    options: { attempts: 5, backoff: { type: 'exponential', delay: 1_000 }, removeOnComplete: true, removeOnFail: true },
    deadlineMs: 5 * 60 * 1000,
  },
} as const satisfies Record<
  string,
  { queue: QueueName; payload: z.ZodType; options: JobsOptions; deadlineMs: number }
>;

export type JobName = keyof typeof jobCatalog;
export type JobPayload<N extends JobName> = z.output<(typeof jobCatalog)[N]['payload']>;
export type QueueOfJob<N extends JobName> = (typeof jobCatalog)[N]['queue'];

export function jobsOfQueue(queue: QueueName): JobName[] {
  return (Object.keys(jobCatalog) as JobName[]).filter((name) => jobCatalog[name].queue === queue);
}

/** Deterministic job id: `<runId>__<taskId>` (BullMQ forbids `:` in custom ids). */
export function taskJobId(runId: string, taskId: string): string {
  return `${runId}__${taskId}`;
}

export function aggregateJobId(runId: string): string {
  return `${runId}__aggregate`;
}
