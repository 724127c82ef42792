import type { Migration } from 'kysely';
import { BENCHFLEET_VERSION, type Logger } from '@benchfleet/core';
import { PostgresHealthProbe, postgresOutageOf, type Database } from '@benchfleet/db';
import {
  DEFAULT_HAND_BACK_MS,
  handBackTimings,
  startWorkerRuntime,
  type HealthCheck,
  type ServedJob,
  type WorkerRuntime,
} from '@benchfleet/queue';
import { startTelemetry, type Telemetry, type TelemetryConfig } from '@benchfleet/telemetry';
import type { TaskProcessorDeps } from './task-processor.js';
import { startMetricsServer, type MetricsServer, type WorkerMetrics } from './worker-metrics.js';
import { openWorkerPool, openWorkerResources } from './worker-resources.js';
import { recoverAfterOutage, workerHealthCheck } from './worker-health-checks.js';
import { stopOnSignals, stopWhenLauncherExits, stopWorker } from './worker-stop.js';

export interface WorkerProcessSettings {
  app: string;
  /** The schema the worker needs (the core's and its benchmarks' migrations): checked at start. */
  migrations: Readonly<Record<string, Migration>>;
  queue: string;
  databaseUrl: string;
  redisUrl: string;
  prefix: string;
  concurrency: number;
  workerId: string;
  graceMs: number;
  logLevel: string;
  /** 0 picks a free port; undefined serves no metrics. */
  metricsPort?: number;
  /** Default 127.0.0.1: only this machine. */
  metricsHost?: string;
  lockDurationMs?: number;
  stalledIntervalMs?: number;
  /** From a service lost to the worker's jobs back in the queue, at most (BENCHFLEET_HANDBACK_S; default 30 s). */
  handBackMs?: number;
  /** The artifact store the worker writes to: checked like Postgres (a full disk pauses the worker). */
  artifactStore?: { healthProblem(name: string, timeoutMs?: number): Promise<string | null> };
  /**
   * Summarises a run whose last task this worker settled, so a run gets its summary with no
   * aggregate worker running; when it fails (or is not given) the aggregate job does it.
   */
  summarizeRun?: (db: Database, runId: string) => Promise<void>;
  /**
   * Tracing, as `telemetryConfigFromEnv` read it at the edge (default off). On, spans are exported
   * as service `benchfleet-<app>` (unless OTEL_SERVICE_NAME says otherwise) and the last ones are
   * flushed at shutdown; off, no OpenTelemetry module is loaded.
   */
  telemetry?: TelemetryConfig;
  /**
   * Started by `npx` (npm exec): stop as on SIGTERM when that launcher goes away. `kill $!` after
   * `npx worker-… &` reaches npm, which dies without passing the signal on, and the worker, left
   * with a new parent, would serve on unseen.
   */
  stopWhenLauncherExits?: boolean;
  /** How long committed outcomes stay in the outcome ledger (BENCHFLEET_OUTCOME_LEDGER_S; default 1 h). */
  outcomeLedgerKeepMs?: number;
}

export interface WorkerServices {
  db: Database;
  logger: Logger;
  metrics: WorkerMetrics;
  /** Dependencies of `createTaskJobHandler`: step batching, the aggregate trigger, metrics. */
  taskDeps: TaskProcessorDeps;
}

/** What a worker serves, and what else it needs up besides Postgres and Redis (e.g. its Bytebot stack). */
export interface WorkerJobs {
  jobs: readonly ServedJob[];
  healthCheck?: HealthCheck;
  /** Told in the worker's heartbeat. */
  capabilities?: readonly string[];
  /** Writes its episodes left queued (the LLM calls' inputs), before the pool closes. */
  flush?: () => Promise<void>;
}

export interface RunningWorker {
  runtime: WorkerRuntime;
  /** The worker's pool; valid until it has finished. */
  db: Database;
  metricsServer?: MetricsServer;
  logger: Logger;
  /** Shuts down (as SIGTERM does) and releases every connection. */
  stop(): Promise<void>;
  /** Resolves once the worker has stopped and released everything. */
  finished: Promise<void>;
}

/** The process's tracing, named after its app and worker: `benchfleet-worker-webshop`, … */
function startProcessTelemetry(
  settings: WorkerProcessSettings,
  logger: Logger,
): Promise<Telemetry> {
  return startTelemetry(settings.telemetry ?? { enabled: false, reason: 'no endpoint' }, {
    logger,
    serviceName: `benchfleet-${settings.app}`,
    resourceAttributes: {
      'service.instance.id': settings.workerId,
      'service.version': BENCHFLEET_VERSION,
    },
  });
}

/**
 * The life of a worker process, shared by every worker app: services checked and opened
 * (worker-resources), handlers built, the queue served with its health checks
 * (worker-health-checks), metrics exposed, and SIGTERM/SIGINT turned into a graceful shutdown
 * (worker-stop).
 */
export async function startWorkerProcess(
  settings: WorkerProcessSettings,
  buildJobs: (services: WorkerServices) => Promise<WorkerJobs>,
): Promise<RunningWorker> {
  const pool = await openWorkerPool(settings);
  const telemetry = await startProcessTelemetry(settings, pool.logger);
  const resources = openWorkerResources(settings, pool);
  const { logger, db, metrics, taskDeps, records, tasks, ledger } = resources;
  const handBackMs = settings.handBackMs ?? DEFAULT_HAND_BACK_MS;
  const { timeoutMs } = handBackTimings(handBackMs);
  const probe = new PostgresHealthProbe(settings.databaseUrl, settings.workerId, timeoutMs);
  const { jobs, healthCheck, capabilities, flush } = await buildJobs({
    db,
    logger,
    metrics,
    taskDeps,
  });
  let stopping = false;
  let pausedBecause: string | null = null;
  const runtime = await startWorkerRuntime({
    ...runtimeSettings(settings),
    jobs,
    logger,
    handBackMs,
    ...(capabilities ? { capabilities } : {}),
    healthCheck: workerHealthCheck(
      probe,
      settings.artifactStore,
      settings.workerId,
      timeoutMs,
      healthCheck,
    ),
    outageOf: (error) => postgresOutageOf(error, settings.databaseUrl),
    // What Postgres did not take during the outage is written before the next job is taken.
    onRecovered: recoverAfterOutage(records, tasks, ledger, logger, settings.workerId),
    onPause: (reason) => (pausedBecause = reason),
    onJobFinished: (event) => metrics.jobFinished(event),
  });
  const health = () =>
    stopping ? 'shutting down' : pausedBecause ? `paused: ${pausedBecause}` : null;
  const metricsServer =
    settings.metricsPort === undefined
      ? undefined
      : await startMetricsServer(
          metrics,
          settings.metricsPort,
          health,
          settings.metricsHost ?? '127.0.0.1',
        );
  logger.info(
    { queue: settings.queue, concurrency: settings.concurrency, metricsPort: metricsServer?.port },
    'worker ready',
  );

  let stopped: Promise<void> | undefined;
  let markFinished!: () => void;
  const finished = new Promise<void>((resolve) => (markFinished = resolve));
  const parts = { runtime, probe, metricsServer, telemetry, flush };
  const stop = () =>
    (stopped ??= (async () => {
      stopping = true;
      await stopWorker(resources, parts);
      markFinished();
    })());
  stopOnSignals(stop, logger);
  if (settings.stopWhenLauncherExits) stopWhenLauncherExits(stop, finished, logger);
  return { runtime, db, ...(metricsServer ? { metricsServer } : {}), logger, stop, finished };
}

/** The runtime's settings that come from the process's settings as they are. */
function runtimeSettings(settings: WorkerProcessSettings) {
  return {
    queue: settings.queue,
    redisUrl: settings.redisUrl,
    prefix: settings.prefix,
    concurrency: settings.concurrency,
    workerId: settings.workerId,
    graceMs: settings.graceMs,
    ...(settings.lockDurationMs !== undefined ? { lockDurationMs: settings.lockDurationMs } : {}),
    ...(settings.stalledIntervalMs !== undefined
      ? { stalledIntervalMs: settings.stalledIntervalMs }
      : {}),
  };
}
