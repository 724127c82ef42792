import { isIP } from 'node:net';
import { z } from 'zod';
import { s3SettingsFromEnv, type ArtifactSettings } from '@benchfleet/artifacts';
import {
  ConfigError,
  databaseUrlSchema,
  logLevelSchema,
  parseConfig,
  queuePrefixSchema,
  redisUrlSchema,
  SERVICE_ENV_LABELS,
  serviceEnvInput,
} from '@benchfleet/core';

export interface DashboardFlags {
  port?: string;
  host?: string;
  authToken?: string;
}

const schema = z.object({
  databaseUrl: databaseUrlSchema,
  redisUrl: redisUrlSchema,
  prefix: queuePrefixSchema,
  logLevel: logLevelSchema,
  artifactsUri: z.string().default('file://./.benchfleet/artifacts'),
  port: z.coerce
    .number({ error: 'expected a port number, e.g. --port 8080' })
    .int()
    .min(0)
    .max(65535),
  host: z.string().min(1),
  authToken: z
    .string()
    .min(16, 'must be at least 16 characters (e.g. `openssl rand -hex 24`)')
    .optional(),
  pollMs: z.coerce.number().int().min(50).max(60_000),
  exportTimeoutS: z.coerce.number().int().min(1).max(86_400),
});

export type DashboardConfig = z.output<typeof schema> & { artifactSettings: ArtifactSettings };

export function isLoopbackHost(host: string): boolean {
  if (host === 'localhost') return true;
  if (isIP(host) === 4) return host.startsWith('127.');
  return host === '::1' || host === '[::1]';
}

/** Flags and environment, parsed once; a non-loopback bind without a token is refused here. */
export function loadDashboardConfig(
  flags: DashboardFlags,
  env: NodeJS.ProcessEnv = process.env,
): DashboardConfig {
  const config = parseConfig(
    schema,
    {
      ...serviceEnvInput(env),
      port: flags.port ?? env.DASHBOARD_PORT ?? 8080,
      host: flags.host ?? (env.DASHBOARD_HOST || '127.0.0.1'),
      authToken: flags.authToken ?? (env.DASHBOARD_TOKEN || undefined),
      pollMs: env.DASHBOARD_POLL_MS || 500,
      exportTimeoutS: env.DASHBOARD_EXPORT_TIMEOUT_S || 600,
    },
    {
      ...SERVICE_ENV_LABELS,
      port: '--port',
      host: '--host',
      authToken: '--auth-token (or DASHBOARD_TOKEN)',
      pollMs: 'DASHBOARD_POLL_MS',
      exportTimeoutS: 'DASHBOARD_EXPORT_TIMEOUT_S',
    },
  );
  if (!isLoopbackHost(config.host) && !config.authToken) {
    throw new ConfigError([
      `--host ${config.host}: binding an address other than loopback needs a token; pass --auth-token (or set DASHBOARD_TOKEN) to one of at least 16 characters, or bind 127.0.0.1`,
    ]);
  }
  const s3 = s3SettingsFromEnv(env);
  return { ...config, artifactSettings: s3 ? { s3 } : {} };
}
