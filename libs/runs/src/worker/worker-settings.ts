import { z } from 'zod';
import {
  databaseUrlSchema,
  flag,
  logLevelSchema,
  queuePrefixSchema,
  redisUrlSchema,
} from '@benchfleet/core';
import type { WorkerIdDefault } from '@benchfleet/benchmark-kit';

const wholeNumber = (what: string) =>
  z.coerce
    .number({ error: `expected a whole number ${what}` })
    .int(`expected a whole number ${what}`);

/** How a worker app's common settings differ from another's: its id and its grace period. */
export interface WorkerSettingsDefaults {
  workerId: WorkerIdDefault;
  graceS: number;
}

/**
 * The settings every worker process has (the benchmark workers and the fleet keeper), as one zod
 * object whose fields say their flag and variable: services, identity, grace period, metrics,
 * lock duration and hand-back bound.
 */
export function workerSettings(defaults: WorkerSettingsDefaults, env: NodeJS.ProcessEnv) {
  return z.object({
    ...serviceSettings(),
    ...identitySettings(defaults, env),
    ...metricsSettings(),
    ...faultBoundSettings(),
    // Read by the workers that write artifacts (`worker.artifacts`); its default is theirs.
    artifactsUri: flag(z.string().min(1).optional(), {
      flag: null,
      env: 'BENCHFLEET_ARTIFACTS',
      description: 'where screenshots go',
    }),
  });
}

/** Where the fleet's Postgres and Redis are, and how the worker logs. */
function serviceSettings() {
  return {
    databaseUrl: flag(databaseUrlSchema, {
      flag: null,
      env: 'DATABASE_URL',
      description: 'the fleet database',
    }),
    redisUrl: flag(redisUrlSchema, { flag: null, env: 'REDIS_URL', description: 'the queues' }),
    prefix: flag(queuePrefixSchema, {
      flag: null,
      env: 'BENCHFLEET_QUEUE_PREFIX',
      description: 'BullMQ key prefix',
    }),
    logLevel: flag(logLevelSchema, { flag: null, env: 'LOG_LEVEL', description: 'pino level' }),
  };
}

/** Who the worker is, and how long its jobs may finish after SIGTERM: the app's defaults. */
function identitySettings(defaults: WorkerSettingsDefaults, env: NodeJS.ProcessEnv) {
  return {
    workerId: flag(
      z
        .string()
        .regex(/^[A-Za-z0-9_.-]{1,100}$/, 'use letters, digits, _ . - only (at most 100)')
        .prefault(() => defaults.workerId.default(env)),
      defaults.workerId.flag ?? {
        flag: '--worker-id <id>',
        env: 'BENCHFLEET_WORKER_ID',
        description: `identity of this worker (default ${defaults.workerId.shown})`,
      },
    ),
    graceS: flag(
      wholeNumber('of seconds, 0 or more')
        .nonnegative('expected a whole number of seconds, 0 or more')
        .prefault(defaults.graceS),
      {
        flag: '--grace-s <n>',
        env: 'BENCHFLEET_GRACE_S',
        description: `seconds active jobs may finish after SIGTERM before they are handed back (default ${defaults.graceS})`,
      },
    ),
  };
}

/** Where `/metrics` and `/healthz` are served. */
function metricsSettings() {
  return {
    metricsPort: flag(
      wholeNumber('from 0 to 65535 (0: any free port)')
        .min(0)
        .max(65535, 'expected a port from 0 to 65535')
        .optional(),
      {
        flag: '--metrics-port <port>',
        env: 'BENCHFLEET_METRICS_PORT',
        description: 'serve /metrics and /healthz on this port, 0 for any free one',
      },
    ),
    // Only this machine by default; 0.0.0.0 for probes from outside (containers).
    metricsHost: flag(z.string().min(1).default('127.0.0.1'), {
      flag: '--metrics-host <host>',
      env: 'BENCHFLEET_METRICS_HOST',
      description:
        'address /metrics and /healthz listen on (default 127.0.0.1; 0.0.0.0 for probes from outside)',
    }),
  };
}

/** The bounds of the worker's fault handling: job locks, hand-back, the outcome ledger. */
function faultBoundSettings() {
  return {
    lockDurationMs: flag(
      wholeNumber('of milliseconds')
        .positive('expected a positive whole number of milliseconds')
        .optional(),
      { flag: null, env: 'BENCHFLEET_LOCK_MS', description: "how long a job's lock lasts" },
    ),
    // From a lost service (Postgres, Redis, the stack, the artifact store) to the worker's jobs back in the queue.
    handBackS: flag(
      z.coerce
        .number({ error: 'expected a number of seconds, at least 3' })
        .min(3, 'expected a number of seconds, at least 3')
        .default(30),
      {
        flag: null,
        env: 'BENCHFLEET_HANDBACK_S',
        description: 'from a lost service to the jobs handed back, at most',
      },
    ),
    // Longer than a failover takes to be noticed: what a promoted replica lacks is restored from it.
    outcomeLedgerS: flag(
      z.coerce
        .number({ error: 'expected a number of seconds, at least 60' })
        .min(60, 'expected a number of seconds, at least 60')
        .default(3600),
      {
        flag: null,
        env: 'BENCHFLEET_OUTCOME_LEDGER_S',
        description: 'how long committed outcomes stay in the outcome ledger in Redis',
      },
    ),
  };
}

type WorkerSettings = z.output<ReturnType<typeof workerSettings>>;

/** The part of parsed settings `startWorkerProcess` takes. */
export function workerProcessSettings(settings: WorkerSettings) {
  return {
    databaseUrl: settings.databaseUrl,
    redisUrl: settings.redisUrl,
    prefix: settings.prefix,
    logLevel: settings.logLevel,
    workerId: settings.workerId,
    graceMs: settings.graceS * 1000,
    handBackMs: Math.round(settings.handBackS * 1000),
    outcomeLedgerKeepMs: Math.round(settings.outcomeLedgerS * 1000),
    metricsHost: settings.metricsHost,
    ...(settings.metricsPort !== undefined ? { metricsPort: settings.metricsPort } : {}),
    ...(settings.lockDurationMs !== undefined
      ? { lockDurationMs: settings.lockDurationMs, stalledIntervalMs: settings.lockDurationMs }
      : {}),
  };
}
