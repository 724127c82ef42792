import { z } from 'zod';
import type { JobsOptions } from 'bullmq';

// Queue and job names are persisted in Redis: never rename them.

/** The queue of the aggregate worker; each benchmark's task queue is named by its descriptor. */
export const AGGREGATE_QUEUE = 'aggregate';

const id = z
  .string()
  .min(1)
  .max(200)
  .regex(/^[^:]+$/, 'must not contain ":"');

/** What a job carries: ids and small scalars only, never a secret; checked on both sides. */
export interface JobDefinition<P = unknown> {
  readonly name: string;
  readonly queue: string;
  readonly payload: z.ZodType<P>;
  readonly options: JobsOptions;
  /** BullMQ has no job timeout of its own: the job's signal aborts after this long. */
  readonly deadlineMs: number;
}

/**
 * A W3C trace context `traceparent` (version 00): the span that enqueued the job, when tracing is
 * on; the attempt span links to it. Not a secret: trace and span ids only.
 */
const traceparent = z.string().regex(/^00-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}$/);

/** Every task job, whatever its benchmark: the worker reads the rest from Postgres. */
export const taskPayloadSchema = z
  .object({ runId: id, taskId: id, traceparent: traceparent.optional() })
  .strict();
export type TaskPayload = z.output<typeof taskPayloadSchema>;
export type TaskJobDefinition = JobDefinition<TaskPayload>;

const NAME = /^[a-z][a-z0-9-]*$/;

/** A benchmark's task job: one per task, on the benchmark's own queue. */
export function defineTaskJob(definition: {
  name: string;
  queue: string;
  attempts: number;
  backoff: { type: 'exponential' | 'fixed'; delay: number };
  deadlineMs: number;
}): TaskJobDefinition {
  for (const [what, value] of [
    ['job', definition.name],
    ['queue', definition.queue],
  ] as const) {
    if (!NAME.test(value))
      throw new Error(
        `${what} name ${JSON.stringify(value)}: lower-case letters, digits and - only`,
      );
  }
  if (definition.queue === AGGREGATE_QUEUE)
    throw new Error(`queue name ${AGGREGATE_QUEUE} is the aggregate worker's`);
  return {
    name: definition.name,
    queue: definition.queue,
    payload: taskPayloadSchema,
    options: { attempts: definition.attempts, backoff: definition.backoff },
    deadlineMs: definition.deadlineMs,
  };
}

export const aggregateRunJob: JobDefinition<{ runId: string }> = {
  name: 'aggregate-run',
  queue: AGGREGATE_QUEUE,
  payload: z.object({ runId: id }).strict(),
  // Removed when done so that the same deterministic id can run again after a resume.
  options: {
    attempts: 5,
    backoff: { type: 'exponential', delay: 1_000 },
    removeOnComplete: true,
    removeOnFail: true,
  },
  deadlineMs: 5 * 60 * 1000,
};

/** Deterministic job id: `<runId>__<taskId>` (BullMQ forbids `:` in custom ids). */
export function taskJobId(runId: string, taskId: string): string {
  return `${runId}__${taskId}`;
}

export function aggregateJobId(runId: string): string {
  return `${runId}__aggregate`;
}
