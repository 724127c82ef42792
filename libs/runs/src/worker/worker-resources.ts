import { causeOf, createLogger, errorMessage, RepeatedLog, type Logger } from '@benchfleet/core';
import {
  checkDatabase,
  checkSchema,
  createDatabase,
  StepWriter,
  StepsRepository,
  TasksRepository,
  type Database,
} from '@benchfleet/db';
import { checkRedis, JobProducer, refuseEvictingRedis } from '@benchfleet/queue';
import { requestRunAggregate } from '../run-aggregate.js';
import { PendingAttemptRecords } from './attempt-records.js';
import { OutcomeLedger, recordInLedger } from '../outcome-ledger.js';
import type { TaskProcessorDeps } from './task-processor.js';
import { WorkerMetrics } from './worker-metrics.js';
import type { WorkerProcessSettings } from './worker-process.js';

/** What a worker process holds for its whole life, shared by its parts (one typed bag). */
export interface WorkerResources {
  logger: Logger;
  /** Errors of one cause (every connection of the pool ends at once on a restart) once per interval. */
  repeated: RepeatedLog;
  db: Database;
  steps: StepWriter;
  producer: JobProducer;
  metrics: WorkerMetrics;
  tasks: TasksRepository;
  ledger: OutcomeLedger;
  records: PendingAttemptRecords;
  /** Dependencies of `createTaskJobHandler`: step batching, the aggregate trigger, metrics. */
  taskDeps: TaskProcessorDeps;
}

/** The worker's Postgres pool and logger, once Postgres, its schema and Redis are checked. */
export interface WorkerPool {
  logger: Logger;
  repeated: RepeatedLog;
  db: Database;
}

/**
 * The services a worker needs, checked (Postgres and its schema, Redis and its eviction policy),
 * and its pool opened.
 */
export async function openWorkerPool(settings: WorkerProcessSettings): Promise<WorkerPool> {
  const [, redisFacts] = await Promise.all([
    checkDatabase(settings.databaseUrl, 'DATABASE_URL'),
    checkRedis(settings.redisUrl, 'REDIS_URL'),
  ]);
  refuseEvictingRedis(settings.redisUrl, redisFacts);
  const logger = createLogger({ level: settings.logLevel, name: settings.app });
  const repeated = new RepeatedLog(logger.child({ worker: settings.workerId }));
  const db = createDatabase(settings.databaseUrl, {
    max: Math.min(20, Math.max(4, Math.ceil(settings.concurrency / 4))),
    onError: (error) =>
      repeated.warn(
        `pg:${causeOf(error)}`,
        { err: error },
        `Postgres connection: ${errorMessage(error)}`,
      ),
  });
  await checkSchema(db, settings.migrations).catch(async (error: unknown) => {
    await db.destroy();
    throw error;
  });
  return { logger, repeated, db };
}

/**
 * What the worker writes through, over its pool: the step writer, the producer of aggregate
 * jobs, metrics, the outcome ledger and the records Postgres did not take.
 */
export function openWorkerResources(
  settings: WorkerProcessSettings,
  { logger, repeated, db }: WorkerPool,
): WorkerResources {
  const steps = new StepWriter(new StepsRepository(db));
  // Long-lived: it reconnects for as long as the worker lives, or a Redis blip would lose the aggregate of a run.
  const producer = new JobProducer(settings.redisUrl, settings.prefix, 'worker');
  const metrics = new WorkerMetrics(settings.queue, { worker: settings.workerId });
  metrics.watchQueue(producer.queue(settings.queue));
  const onRunSettled = runSettledHandler(settings, db, producer, logger);
  const tasks = new TasksRepository(db);
  const ledger = new OutcomeLedger(
    producer.connection,
    settings.prefix,
    settings.outcomeLedgerKeepMs,
  );
  const records = new PendingAttemptRecords(tasks, logger, onRunSettled, undefined, (request, at) =>
    recordInLedger(ledger, [{ ...request, workerId: settings.workerId, at }], logger),
  );
  const taskDeps: TaskProcessorDeps = {
    db,
    steps,
    onRunSettled,
    onOutcome: (event) => metrics.outcome(event),
    records,
    ledger,
    logger,
  };
  return { logger, repeated, db, steps, producer, metrics, tasks, ledger, records, taskDeps };
}

/**
 * What the worker does when it settled a run's last task: summarise it here when it can, else
 * enqueue the run's aggregate job.
 */
function runSettledHandler(
  settings: Pick<WorkerProcessSettings, 'summarizeRun'>,
  db: Database,
  producer: JobProducer,
  logger: Logger,
): (runId: string) => Promise<void> {
  return async (runId) => {
    if (settings.summarizeRun) {
      try {
        await settings.summarizeRun(db, runId);
        logger.info({ run: runId }, 'run settled and summarised');
        return;
      } catch (error) {
        logger.warn(
          { run: runId, err: error },
          'run settled but could not be summarised here: leaving it to the aggregate job',
        );
      }
    }
    await requestRunAggregate(producer, runId);
    logger.info({ run: runId }, 'run settled: aggregate job enqueued');
  };
}
