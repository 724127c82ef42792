import { request } from 'node:http';
import { errorMessage } from '@benchfleet/core';

/** The images the services come from when testcontainers starts them. */
const POSTGRES_CONTAINER_IMAGE = 'postgres:16-alpine';
const REDIS_CONTAINER_IMAGE = 'redis:7-alpine';
/** What testcontainers 11 starts beside them to remove them should this process die (ryuk). */
export const REAPER_CONTAINER_IMAGE = 'testcontainers/ryuk:0.14.0';

const ENGINE_DEADLINE_MS = 5_000;
/** Time for pulling what is missing: a registry that answers serves these small images well within it. */
const PULL_DEADLINE_MS = 60_000;

/** Whether containers can provide the services here, and if not, the one line why. */
export type ContainerVerdict = { usable: true } | { usable: false; reason: string };

function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: no answer within ${ms / 1000} s`)), ms);
  });
  return Promise.race([promise, deadline]).finally(() => clearTimeout(timer));
}

/**
 * GET /_ping on the engine `env` names (DOCKER_HOST, else the default socket): true, or why not.
 * An engine behind TLS is left to testcontainers, which reads its certificates.
 */
function pingDockerEngine(env: NodeJS.ProcessEnv): Promise<true | string> {
  const host = env.DOCKER_HOST || 'unix:///var/run/docker.sock';
  if (env.DOCKER_TLS_VERIFY) return Promise.resolve(true);
  const target = host.startsWith('unix://')
    ? { socketPath: host.slice('unix://'.length) }
    : host.startsWith('tcp://')
      ? { host: new URL(host).hostname, port: Number(new URL(host).port || 2375) }
      : undefined;
  if (!target) return Promise.resolve(`DOCKER_HOST=${host} is neither unix:// nor tcp://`);
  return new Promise((resolve) => {
    const req = request({ ...target, path: '/_ping', timeout: ENGINE_DEADLINE_MS }, (res) => {
      res.resume();
      resolve(
        res.statusCode === 200 ? true : `the Docker engine at ${host} answered ${res.statusCode}`,
      );
    });
    req.once('timeout', () =>
      req.destroy(new Error(`no answer within ${ENGINE_DEADLINE_MS / 1000} s`)),
    );
    req.once('error', (error) => resolve(`no Docker engine answers at ${host} (${error.message})`));
    req.end();
  });
}

/** The images a container-provided Postgres and Redis need: ryuk too unless it is switched off. */
export function containerImages(env: NodeJS.ProcessEnv): string[] {
  const reaper =
    env.TESTCONTAINERS_RYUK_DISABLED === 'true'
      ? []
      : [env.RYUK_CONTAINER_IMAGE ?? REAPER_CONTAINER_IMAGE];
  return [POSTGRES_CONTAINER_IMAGE, REDIS_CONTAINER_IMAGE, ...reaper];
}

/**
 * Containers are used only where a Docker engine answers AND every image they need is on the
 * machine or pulls within a minute: an engine without a registry (or without the images) must
 * not turn the tests or the demo red, so the caller falls back to local services instead.
 */
export async function containerServicesVerdict(
  env: NodeJS.ProcessEnv,
  options: { images?: string[]; pullDeadlineMs?: number } = {},
): Promise<ContainerVerdict> {
  const engine = await pingDockerEngine(env);
  if (engine !== true) return { usable: false, reason: engine };
  let testcontainers: typeof import('testcontainers');
  try {
    // A development dependency: the production image has no testcontainers, hence no containers.
    testcontainers = await import('testcontainers');
  } catch {
    return { usable: false, reason: 'testcontainers is not installed' };
  }
  try {
    const client = await within(
      testcontainers.getContainerRuntimeClient(),
      ENGINE_DEADLINE_MS,
      'Docker engine',
    );
    const pullDeadline = Date.now() + (options.pullDeadlineMs ?? PULL_DEADLINE_MS);
    for (const image of options.images ?? containerImages(env)) {
      const name = testcontainers.ImageName.fromString(image);
      if (await within(client.image.exists(name), ENGINE_DEADLINE_MS, `docker image ${image}`))
        continue;
      const left = Math.max(1, pullDeadline - Date.now());
      const pulled = await within(client.image.pull(name), left, `docker pull ${image}`).then(
        () => client.image.exists(name),
        (error: unknown) => errorMessage(error).trim(),
      );
      // A pull whose stream ends with an error in it resolves all the same: the image decides.
      if (pulled !== true)
        throw new Error(
          `${image} is not here and cannot be pulled (${pulled || 'no image after the pull'})`,
        );
    }
    return { usable: true };
  } catch (error) {
    return { usable: false, reason: errorMessage(error) };
  }
}

export type ContainerService = { url: string; source: string; stop(): Promise<void> };

export async function postgresFromContainer(): Promise<ContainerService> {
  const { PostgreSqlContainer } = await import('@testcontainers/postgresql');
  const container = await new PostgreSqlContainer(POSTGRES_CONTAINER_IMAGE)
    .withDatabase('postgres')
    .start();
  return {
    url: container.getConnectionUri(),
    source: 'testcontainers',
    stop: async () => void (await container.stop()),
  };
}

export async function redisFromContainer(): Promise<ContainerService> {
  const { RedisContainer } = await import('@testcontainers/redis');
  const container = await new RedisContainer(REDIS_CONTAINER_IMAGE).start();
  return {
    url: container.getConnectionUrl(),
    source: 'testcontainers',
    stop: async () => void (await container.stop()),
  };
}
