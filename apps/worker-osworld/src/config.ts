import { hostname } from 'node:os';
import { z } from 'zod';
import { s3SettingsFromEnv, type ArtifactSettings } from '@benchfleet/artifacts';
import { databaseUrlSchema, logLevelSchema, parseConfig, queuePrefixSchema, redisUrlSchema, SERVICE_ENV_LABELS, serviceEnvInput } from '@benchfleet/core';

export interface OsworldWorkerFlags {
  bytebotUrl?: string;
  desktopUrl?: string;
  stackId?: string;
  graceS?: string;
  metricsPort?: string;
  events?: boolean;
}

const httpUrl = z.url({ protocol: /^https?$/, error: 'must be an http(s) URL' });

const schema = z.object({
  databaseUrl: databaseUrlSchema,
  redisUrl: redisUrlSchema,
  prefix: queuePrefixSchema,
  logLevel: logLevelSchema,
  artifactsUri: z.string().min(1).default('file://./.benchfleet/artifacts'),
  bytebotUrl: httpUrl,
  desktopUrl: httpUrl.optional(),
  stackId: z.string().regex(/^[A-Za-z0-9_.-]+$/, 'letters, digits, _ . - only'),
  graceMs: z.coerce.number().int().nonnegative(),
  metricsPort: z.coerce.number().int().min(0).max(65535).optional(),
  lockDurationMs: z.coerce.number().int().positive().optional(),
  events: z.boolean(),
});

export type OsworldWorkerConfig = z.output<typeof schema> & { artifactSettings: ArtifactSettings };

export function loadOsworldWorkerConfig(flags: OsworldWorkerFlags, env: NodeJS.ProcessEnv = process.env): OsworldWorkerConfig {
  const s3 = s3SettingsFromEnv(env);
  const parsed = parseConfig(
    schema,
    {
      ...serviceEnvInput(env),
      bytebotUrl: flags.bytebotUrl ?? env.BYTEBOT_URL,
      desktopUrl: flags.desktopUrl ?? (env.BYTEBOT_DESKTOP_URL || undefined),
      stackId: flags.stackId ?? env.BENCHFLEET_STACK_ID ?? `stack-${hostname()}`,
      // A Bytebot task cannot be handed over mid-way: by default an OSWorld worker lets it finish.
      graceMs: Number(flags.graceS ?? env.BENCHFLEET_GRACE_S ?? 3 * 3600) * 1000,
      metricsPort: flags.metricsPort ?? (env.BENCHFLEET_METRICS_PORT || undefined),
      lockDurationMs: env.BENCHFLEET_LOCK_MS || undefined,
      events: flags.events ?? true,
    },
    {
      ...SERVICE_ENV_LABELS,
      bytebotUrl: '--bytebot-url (or BYTEBOT_URL)',
      desktopUrl: '--desktop-url (or BYTEBOT_DESKTOP_URL)',
      stackId: '--stack-id',
      graceMs: '--grace-s',
      metricsPort: '--metrics-port',
      lockDurationMs: 'BENCHFLEET_LOCK_MS',
    },
  );
  return { ...parsed, artifactSettings: s3 ? { s3 } : {} };
}
