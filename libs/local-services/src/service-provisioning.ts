import { errorMessage } from '@benchfleet/core';
import { checkDatabase } from '@benchfleet/db';
import { checkRedis } from '@benchfleet/queue';
import {
  containerServicesVerdict,
  postgresFromContainer,
  redisFromContainer,
  type ContainerService as Service,
} from './container-services.js';
import { LocalPostgres } from './local-postgres.js';
import { findOnPath, LocalRedis } from './local-redis.js';

export interface ProvisionedServices {
  /** URL of a database the caller may use to create and drop other databases. */
  databaseUrl: string;
  redisUrl: string;
  /** Where the services came from, for the log line. */
  source: { postgres: string; redis: string };
  stop(): Promise<void>;
}

export interface ProvisionOptions {
  env?: NodeJS.ProcessEnv;
  /** Prefer the TEST_* variables (tests) over the plain ones (demo). */
  preferTestVariables?: boolean;
  log?: (line: string) => void;
  /**
   * Local servers run in process groups of their own, so a terminal's Ctrl-C reaches only the
   * caller, which stops them after whatever still uses them (the demo and its workers).
   */
  ownProcessGroup?: boolean;
}

export class ServicesUnavailableError extends Error {
  override readonly name = 'ServicesUnavailableError';
}

/**
 * Finds Postgres and Redis in this order: TEST_DATABASE_URL / TEST_REDIS_URL (tests) or
 * DATABASE_URL / REDIS_URL; testcontainers where a Docker engine answers and has (or can pull)
 * the images; embedded Postgres from npm and `redis-server` on PATH; otherwise one error that says
 * how to provide them.
 */
export async function provisionServices(
  options: ProvisionOptions = {},
): Promise<ProvisionedServices> {
  const env = options.env ?? process.env;
  const log = options.log ?? (() => undefined);
  const pick = (name: string) =>
    options.preferTestVariables
      ? (env[`TEST_${name}`] ?? env[name])
      : (env[name] ?? env[`TEST_${name}`]);
  const stops: Array<() => Promise<void>> = [];
  const stopAll = async () => {
    for (const stop of stops.reverse()) await stop().catch(() => undefined);
  };

  try {
    let docker: boolean | undefined;
    const viaDocker = async () => {
      if (docker !== undefined) return docker;
      const verdict = await containerServicesVerdict(env);
      if (!verdict.usable) log(`no containers for Postgres and Redis: ${verdict.reason}`);
      return (docker = verdict.usable);
    };

    let postgres: Service;
    const pgUrl = pick('DATABASE_URL');
    if (pgUrl) {
      await checkDatabase(
        pgUrl,
        options.preferTestVariables && env.TEST_DATABASE_URL ? 'TEST_DATABASE_URL' : 'DATABASE_URL',
      );
      postgres = { url: pgUrl, source: 'environment', stop: async () => undefined };
    } else if (await viaDocker()) {
      postgres = await postgresFromContainer();
    } else {
      try {
        log('starting an embedded Postgres in a temp directory…');
        const local = await LocalPostgres.create({ ownProcessGroup: options.ownProcessGroup });
        postgres = {
          url: local.url,
          source: `embedded Postgres on port ${local.port}`,
          stop: () => local.destroy(),
        };
      } catch (error) {
        throw new ServicesUnavailableError(
          `no Postgres: set DATABASE_URL (or TEST_DATABASE_URL) to a server, or start a Docker engine that has or can pull the images (embedded Postgres failed: ${errorMessage(error)})`,
        );
      }
    }
    stops.push(postgres.stop);

    let redis: Service;
    const redisUrl = pick('REDIS_URL');
    const redisBinary = findOnPath('redis-server', env);
    if (redisUrl) {
      await checkRedis(
        redisUrl,
        options.preferTestVariables && env.TEST_REDIS_URL ? 'TEST_REDIS_URL' : 'REDIS_URL',
      );
      redis = { url: redisUrl, source: 'environment', stop: async () => undefined };
    } else if (await viaDocker()) {
      redis = await redisFromContainer();
    } else if (redisBinary) {
      const local = await LocalRedis.create({
        binary: redisBinary,
        ownProcessGroup: options.ownProcessGroup,
      });
      redis = {
        url: local.url,
        source: `redis-server on port ${local.port}`,
        stop: () => local.destroy(),
      };
    } else {
      throw new ServicesUnavailableError(
        'no Redis: set REDIS_URL (or TEST_REDIS_URL) to a server, start a Docker engine that has or can pull the images, or install redis-server (apt-get install redis-server)',
      );
    }
    stops.push(redis.stop);
    return {
      databaseUrl: postgres.url,
      redisUrl: redis.url,
      source: { postgres: postgres.source, redis: redis.source },
      stop: stopAll,
    };
  } catch (error) {
    await stopAll();
    throw error;
  }
}
