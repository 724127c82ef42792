import { z } from 'zod';
import {
  databaseUrlSchema,
  logLevelSchema,
  queuePrefixSchema,
  redisUrlSchema,
  SERVICE_ENV_LABELS,
  serviceEnvInput,
} from '@benchfleet/core';

/** The flags every worker app takes (each app adds its own). */
export interface WorkerFlags {
  workerId?: string;
  graceS?: string;
  metricsPort?: string;
  metricsHost?: string;
}

const wholeNumber = (what: string) =>
  z.coerce
    .number({ error: `expected a whole number ${what}` })
    .int(`expected a whole number ${what}`);

/** What a worker process needs, as an app's config schema spreads it: `z.object({ ...workerConfigShape, … })`. */
export const workerConfigShape = {
  databaseUrl: databaseUrlSchema,
  redisUrl: redisUrlSchema,
  prefix: queuePrefixSchema,
  logLevel: logLevelSchema,
  workerId: z
    .string()
    .regex(/^[A-Za-z0-9_.-]{1,100}$/, 'use letters, digits, _ . - only (at most 100)'),
  graceS: wholeNumber('of seconds, 0 or more').nonnegative(
    'expected a whole number of seconds, 0 or more',
  ),
  metricsPort: wholeNumber('from 0 to 65535 (0: any free port)')
    .min(0)
    .max(65535, 'expected a port from 0 to 65535')
    .optional(),
  /** Where /metrics and /healthz listen; only this machine by default, 0.0.0.0 for probes from outside (containers). */
  metricsHost: z.string().min(1).default('127.0.0.1'),
  lockDurationMs: wholeNumber('of milliseconds')
    .positive('expected a positive whole number of milliseconds')
    .optional(),
  /** From a lost service (Postgres, Redis, the stack, the artifact store) to the worker's jobs back in the queue. */
  handBackS: z.coerce
    .number({ error: 'expected a number of seconds, at least 3' })
    .min(3, 'expected a number of seconds, at least 3')
    .default(30),
};

export const WORKER_CONFIG_LABELS = {
  ...SERVICE_ENV_LABELS,
  workerId: '--worker-id (or BENCHFLEET_WORKER_ID)',
  graceS: '--grace-s (or BENCHFLEET_GRACE_S)',
  metricsPort: '--metrics-port (or BENCHFLEET_METRICS_PORT)',
  metricsHost: '--metrics-host (or BENCHFLEET_METRICS_HOST)',
  lockDurationMs: 'BENCHFLEET_LOCK_MS',
  handBackS: 'BENCHFLEET_HANDBACK_S',
} as const;

/** The raw values of those settings: flags first, then their environment variables, then the app's defaults. */
export function workerConfigInput(
  flags: WorkerFlags,
  env: NodeJS.ProcessEnv,
  defaults: { workerId: string; graceS: number },
) {
  return {
    ...serviceEnvInput(env),
    workerId: flags.workerId ?? (env.BENCHFLEET_WORKER_ID || defaults.workerId),
    graceS: flags.graceS ?? (env.BENCHFLEET_GRACE_S || defaults.graceS),
    metricsPort: flags.metricsPort ?? (env.BENCHFLEET_METRICS_PORT || undefined),
    metricsHost: flags.metricsHost ?? (env.BENCHFLEET_METRICS_HOST || undefined),
    lockDurationMs: env.BENCHFLEET_LOCK_MS || undefined,
    handBackS: env.BENCHFLEET_HANDBACK_S || undefined,
  };
}

type WorkerConfig = z.output<z.ZodObject<typeof workerConfigShape>>;

/** The part of a parsed config `startWorkerProcess` takes. */
export function workerProcessSettings(config: WorkerConfig) {
  return {
    databaseUrl: config.databaseUrl,
    redisUrl: config.redisUrl,
    prefix: config.prefix,
    logLevel: config.logLevel,
    workerId: config.workerId,
    graceMs: config.graceS * 1000,
    handBackMs: Math.round(config.handBackS * 1000),
    metricsHost: config.metricsHost,
    ...(config.metricsPort !== undefined ? { metricsPort: config.metricsPort } : {}),
    ...(config.lockDurationMs !== undefined
      ? { lockDurationMs: config.lockDurationMs, stalledIntervalMs: config.lockDurationMs }
      : {}),
  };
}
