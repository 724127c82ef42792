import { DelayedError, UnrecoverableError, WaitingError, Worker, type Job } from 'bullmq';
import type { Redis } from 'ioredis';
import { errorMessage, type Logger } from '@benchfleet/core';
import { createRedisConnection } from './redis-connection.js';
import { cancelChannel } from './job-producer.js';
import { HealthGate, type HealthCheck } from './health-gate.js';
import { WorkerHeartbeat } from './worker-heartbeat.js';
import type { JobDefinition } from './job-catalog.js';

/** Why a job's signal was aborted. */
export const ABORT_REASONS = {
  shutdown: 'shutdown',
  cancelled: 'run-cancelled',
  deadline: 'deadline',
} as const;
export type AbortReason = (typeof ABORT_REASONS)[keyof typeof ABORT_REASONS];

/**
 * How long a job's lock lasts without renewal. The worker renews its locks at least every half of
 * this, so a lock lapses only when no renewal reached Redis for the whole 15 s: a worker that is
 * dead, cut off from Redis, or whose event loop was stalled for about 8 s or more. Shorter finds a
 * dead worker sooner but takes a job from a live worker starved of CPU or in a long GC pause: that
 * job then runs twice (the first attempt's outcome is refused, never counted; it is work thrown
 * away) and the stall counts towards `maxStalledCount`. BullMQ's default is 30 s.
 */
export const DEFAULT_LOCK_DURATION_MS = 15_000;
/** How often each worker looks for jobs whose lock lapsed (a Lua script over the active list; cheap). */
export const DEFAULT_STALLED_INTERVAL_MS = 5_000;
/**
 * The most time from a worker's death to its jobs being back in the queue: its locks lapse within
 * the lock duration, and the next stalled check of any live worker of the queue hands them back.
 * (BullMQ's defaults: 60 s; a kill -9 was noticed after 68 s.)
 */
export const LOST_WORKER_BOUND_MS = DEFAULT_LOCK_DURATION_MS + DEFAULT_STALLED_INTERVAL_MS;

export function abortReasonOf(signal: AbortSignal): AbortReason | undefined {
  if (!signal.aborted) return undefined;
  const reason: unknown = signal.reason;
  if (reason === ABORT_REASONS.shutdown || reason === ABORT_REASONS.cancelled) return reason;
  return ABORT_REASONS.deadline;
}

export interface JobContext<P> {
  job: Job;
  definition: JobDefinition<P>;
  payload: P;
  /** Aborted on deadline, on `scheduler cancel` of the run, and at the end of the shutdown grace period. */
  signal: AbortSignal;
  logger: Logger;
  workerId: string;
}

export type JobHandler<P> = (context: JobContext<P>) => Promise<unknown>;

/** A job a worker serves, with its one handler. */
export interface ServedJob {
  readonly job: JobDefinition<unknown>;
  readonly handler: JobHandler<unknown>;
}

/** Pairs a job with its handler, typed by the job's payload. */
export function serve<P>(job: JobDefinition<P>, handler: JobHandler<P>): ServedJob {
  // The runtime hands the handler only a payload that `job.payload` has parsed.
  return { job, handler: handler as JobHandler<unknown> };
}

export interface WorkerRuntimeOptions {
  queue: string;
  /** Every job this queue carries, each with exactly one handler. */
  jobs: readonly ServedJob[];
  redisUrl: string;
  prefix: string;
  concurrency: number;
  workerId: string;
  logger: Logger;
  /** How long active jobs may run on after SIGTERM before they are handed back to the queue. */
  graceMs: number;
  /** Default `DEFAULT_LOCK_DURATION_MS`. */
  lockDurationMs?: number;
  /** Default `DEFAULT_STALLED_INTERVAL_MS`. */
  stalledIntervalMs?: number;
  /** How often a job may stall (its worker died) before BullMQ fails it; default 3. */
  maxStalledCount?: number;
  /**
   * Checked before each job (at most once a second while it passes) and after a job failed:
   * while it fails the worker pauses, hands its jobs back without using up an attempt, says why
   * (log, heartbeat, /healthz) and resumes by itself when it passes again.
   */
  healthCheck?: HealthCheck;
  healthRetryMs?: number;
  /** Told when the worker pauses (with the reason) and resumes (null). */
  onPause?: (reason: string | null) => void;
  onJobFinished?: (event: { name: string; ok: boolean; durationMs: number }) => void;
}

export interface WorkerRuntime {
  worker: Worker;
  /** Stops taking jobs, lets active ones finish within the grace period, hands back the rest. */
  shutdown(): Promise<void>;
  /** Resolves once the runtime has shut down. */
  closed: Promise<void>;
  activeJobs(): number;
  /** Why the worker is paused, or null while it serves. */
  pausedBecause(): string | null;
}

export class HandlerCatalogError extends Error {
  override readonly name = 'HandlerCatalogError';
}

/** Every job served belongs to the queue and has exactly one handler. */
export function checkServedJobs(queue: string, jobs: readonly ServedJob[]): Map<string, ServedJob> {
  const byName = new Map<string, ServedJob>();
  const problems: string[] = [];
  if (jobs.length === 0) problems.push('no job to serve');
  for (const served of jobs) {
    if (served.job.queue !== queue)
      problems.push(`job ${served.job.name} belongs to queue ${served.job.queue}`);
    if (byName.has(served.job.name)) problems.push(`two handlers for job ${served.job.name}`);
    if (typeof served.handler !== 'function')
      problems.push(`no handler for job ${served.job.name}`);
    byName.set(served.job.name, served);
  }
  if (problems.length) throw new HandlerCatalogError(`queue ${queue}: ${problems.join('; ')}`);
  return byName;
}

export async function startWorkerRuntime(options: WorkerRuntimeOptions): Promise<WorkerRuntime> {
  const served = checkServedJobs(options.queue, options.jobs);
  const logger = options.logger.child({ worker: options.workerId, queue: options.queue });
  const connection: Redis = createRedisConnection(options.redisUrl, 'worker');
  const subscriber: Redis = createRedisConnection(options.redisUrl, 'worker');
  const activeRuns = new Map<string, string>();
  let shuttingDown = false;
  let healthPause: Promise<void> | undefined;
  let pauseReason: string | null = null;
  const gate = options.healthCheck ? new HealthGate(options.healthCheck) : undefined;
  const heartbeat = new WorkerHeartbeat(
    connection,
    options.prefix,
    options.workerId,
    options.queue,
  );
  const retryMs = options.healthRetryMs ?? 5_000;

  /** Hands a job back for later (no attempt used up) when the world around the fleet is down now. */
  async function handBackIfUnhealthy(
    job: Job,
    token: string | undefined,
    fresh: boolean,
  ): Promise<void> {
    if (!gate || !token) return;
    const health = fresh ? await gate.recheck() : await gate.current();
    if (health.ok) return;
    pauseUntilHealthy(health.reason);
    await job.moveToDelayed(Date.now() + retryMs, token);
    throw new DelayedError();
  }

  const worker = new Worker(
    options.queue,
    async (job: Job, token?: string, bullSignal?: AbortSignal) => {
      const entry = served.get(job.name);
      if (!entry)
        throw new UnrecoverableError(`job ${job.name} is not served by queue ${options.queue}`);
      const definition = entry.job;
      const parsed = definition.payload.safeParse(job.data);
      if (!parsed.success) {
        throw new UnrecoverableError(
          `invalid payload for ${job.name}: ${parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`,
        );
      }
      await handBackIfUnhealthy(job, token, false);
      const signals = [AbortSignal.timeout(definition.deadlineMs)];
      if (bullSignal) signals.push(bullSignal);
      const signal = AbortSignal.any(signals);
      const runId = (parsed.data as { runId?: unknown }).runId;
      activeRuns.set(job.id ?? '', typeof runId === 'string' ? runId : '');
      const started = Date.now();
      const jobLogger = logger.child({ job: job.id, run: runId });
      const name = job.name;
      try {
        const result = await entry.handler({
          job,
          definition,
          payload: parsed.data,
          signal,
          logger: jobLogger,
          workerId: options.workerId,
        });
        options.onJobFinished?.({ name, ok: true, durationMs: Date.now() - started });
        return result;
      } catch (error) {
        options.onJobFinished?.({ name, ok: false, durationMs: Date.now() - started });
        if (abortReasonOf(signal) === ABORT_REASONS.shutdown && token) {
          jobLogger.info('handed back to the queue at shutdown');
          await job.moveToWait(token);
          throw new WaitingError();
        }
        // A job that failed while a service it needs is down is not the job's fault: it waits.
        if (!(error instanceof UnrecoverableError)) await handBackIfUnhealthy(job, token, true);
        jobLogger.warn(
          { err: error, attempt: job.attemptsMade + 1 },
          `job failed: ${errorMessage(error)}`,
        );
        throw error;
      } finally {
        activeRuns.delete(job.id ?? '');
      }
    },
    {
      connection,
      prefix: options.prefix,
      concurrency: options.concurrency,
      lockDuration: options.lockDurationMs ?? DEFAULT_LOCK_DURATION_MS,
      stalledInterval: options.stalledIntervalMs ?? DEFAULT_STALLED_INTERVAL_MS,
      maxStalledCount: options.maxStalledCount ?? 3,
      autorun: false,
      name: options.workerId,
    },
  );
  worker.on('error', (error) => logger.error({ err: error }, 'worker error'));

  function pauseUntilHealthy(reason: string): void {
    if (healthPause || !gate) return;
    pauseReason = reason;
    logger.warn(
      { reason, retryMs },
      `paused: ${reason}; jobs wait in the queue until it answers again`,
    );
    heartbeat.set('paused', reason);
    options.onPause?.(reason);
    worker.pause(true);
    healthPause = (async () => {
      for (;;) {
        if (shuttingDown) return;
        const health = await gate.recheck();
        if (health.ok) break;
        pauseReason = health.reason;
        heartbeat.set('paused', health.reason);
        await new Promise((resolve) => setTimeout(resolve, retryMs));
      }
      healthPause = undefined;
      pauseReason = null;
      logger.info('health check passed: resuming');
      heartbeat.set('serving');
      options.onPause?.(null);
      worker.resume();
    })();
  }

  await subscriber.subscribe(cancelChannel(options.prefix));
  subscriber.on('message', (_channel: string, runId: string) => {
    for (const [jobId, jobRunId] of activeRuns) {
      if (jobRunId === runId) {
        logger.info({ job: jobId, run: runId }, 'run cancelled: aborting its active job');
        worker.cancelJob(jobId, ABORT_REASONS.cancelled);
      }
    }
  });

  let resolveClosed!: () => void;
  const closed = new Promise<void>((resolve) => (resolveClosed = resolve));
  let shutdownPromise: Promise<void> | undefined;

  async function shutdown(): Promise<void> {
    shutdownPromise ??= (async () => {
      shuttingDown = true;
      heartbeat.set('stopping');
      logger.info(
        { active: activeRuns.size, graceMs: options.graceMs },
        'shutting down: no new jobs',
      );
      const graceTimer = setTimeout(() => {
        if (activeRuns.size > 0)
          logger.warn({ active: activeRuns.size }, 'grace period over: handing active jobs back');
        worker.cancelAllJobs(ABORT_REASONS.shutdown);
      }, options.graceMs);
      try {
        await worker.close();
      } finally {
        clearTimeout(graceTimer);
        await heartbeat.stop();
        subscriber.disconnect();
        connection.disconnect();
        logger.info('worker closed');
        resolveClosed();
      }
    })();
    return shutdownPromise;
  }

  void worker.run().catch((error: unknown) => logger.error({ err: error }, 'worker stopped'));
  await worker.waitUntilReady();
  return {
    worker,
    shutdown,
    closed,
    activeJobs: () => activeRuns.size,
    pausedBecause: () => pauseReason,
  };
}
