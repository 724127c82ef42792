import { z } from 'zod';
import { s3SettingsFromEnv, type ArtifactSettings } from '@benchfleet/artifacts';
import {
  databaseUrlSchema,
  logLevelSchema,
  parseConfig,
  queuePrefixSchema,
  redisUrlSchema,
  SERVICE_ENV_LABELS,
  serviceEnvInput,
  UsageError,
} from '@benchfleet/core';
import {
  checkDatabase,
  checkSchema,
  createDatabase,
  RunsRepository,
  type Database,
  type Run,
} from '@benchfleet/db';
import type { Migration } from 'kysely';
import { checkRedis, JobProducer, refuseEvictingRedis } from '@benchfleet/queue';
import { startTelemetry, telemetryConfigFromEnv } from '@benchfleet/telemetry';

const baseSchema = z.object({
  logLevel: logLevelSchema,
  prefix: queuePrefixSchema,
  artifactsUri: z.string().default('file://./.benchfleet/artifacts'),
  codeVersion: z.string().optional(),
  debug: z.boolean(),
});

/** What a command needs; `evictingRedis`: it may run on a Redis that evicts keys (status, to warn of it). */
export type Needs = { database?: boolean; redis?: boolean; evictingRedis?: boolean };

export interface SchedulerConfig extends z.output<typeof baseSchema> {
  databaseUrl: string;
  redisUrl: string;
  artifactSettings: ArtifactSettings;
}

/** Reads the environment once, checking only what the command needs, and reports every bad value at once. */
export async function loadSchedulerConfig(
  needs: Needs,
  env: NodeJS.ProcessEnv = process.env,
): Promise<SchedulerConfig> {
  const schema = baseSchema.extend({
    databaseUrl: needs.database ? databaseUrlSchema : z.string().default(''),
    redisUrl: needs.redis ? redisUrlSchema : z.string().default(''),
  });
  const config = parseConfig(
    schema,
    {
      ...serviceEnvInput(env),
      debug: env.BENCHFLEET_DEBUG === '1',
      codeVersion: env.BENCHFLEET_CODE_VERSION || undefined,
    },
    SERVICE_ENV_LABELS,
  );
  const [, redisFacts] = await Promise.all([
    needs.database ? checkDatabase(config.databaseUrl, 'DATABASE_URL') : undefined,
    needs.redis ? checkRedis(config.redisUrl, 'REDIS_URL') : undefined,
  ]);
  if (redisFacts && !needs.evictingRedis) refuseEvictingRedis(config.redisUrl, redisFacts);
  const s3 = s3SettingsFromEnv(env);
  return { ...config, artifactSettings: s3 ? { s3 } : {} };
}

export interface SchedulerServices {
  config: SchedulerConfig;
  db: Database;
  /** Present when the command needs Redis. */
  producer: JobProducer;
}

/**
 * Runs a command body with checked services and a database whose schema is `schema` (the
 * registry's migrations; false: unchecked, for `migrate`), and always releases them.
 */
export async function withSchedulerServices<T>(
  needs: {
    redis: boolean;
    schema: Readonly<Record<string, Migration>> | false;
    longStatements?: boolean;
    evictingRedis?: boolean;
    /**
     * The command enqueues task jobs: with OTEL_EXPORTER_OTLP_ENDPOINT set, its enqueue is a span
     * (service `benchfleet-scheduler`) whose context the jobs carry to their attempts.
     */
    traced?: boolean;
  },
  body: (services: SchedulerServices) => Promise<T>,
): Promise<T> {
  const telemetryConfig = needs.traced ? telemetryConfigFromEnv(process.env) : undefined;
  const config = await loadSchedulerConfig({
    database: true,
    redis: needs.redis,
    evictingRedis: needs.evictingRedis === true,
  });
  const telemetry = telemetryConfig
    ? await startTelemetry(telemetryConfig, { serviceName: 'benchfleet-scheduler' })
    : undefined;
  // A migration may rewrite a large table in one statement: it gets half an hour, not a minute.
  const long = needs.longStatements
    ? { statementTimeoutMs: 30 * 60_000, idleInTransactionTimeoutMs: 30 * 60_000 }
    : {};
  const db = createDatabase(config.databaseUrl, { max: 4, ...long });
  const producer = needs.redis ? new JobProducer(config.redisUrl, config.prefix) : undefined;
  try {
    if (needs.schema !== false) await checkSchema(db, needs.schema);
    return await body({ config, db, producer: producer ?? missingProducer() });
  } finally {
    await producer?.close();
    await db.destroy();
    await telemetry?.shutdown();
  }
}

function missingProducer(): JobProducer {
  return new Proxy({} as JobProducer, {
    get() {
      throw new Error(
        'this command was started without Redis (withSchedulerServices({ redis: false }))',
      );
    },
  });
}

/** The run, or a usage error that says where to find run ids. */
export async function requireRun(db: Database, runId: string): Promise<Run> {
  const run = await new RunsRepository(db).get(runId);
  if (!run) throw new UsageError(`run ${runId} not found; \`scheduler runs\` lists the runs`);
  return run;
}
