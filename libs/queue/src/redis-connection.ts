import { Redis, type RedisOptions } from 'ioredis';
import { ServiceUnreachableError, errorMessage, redactSecrets } from '@benchfleet/core';

export type RedisRole = 'worker' | 'producer';

/**
 * Workers block on Redis and must survive its restarts (`maxRetriesPerRequest: null`); producers
 * fail fast so a CLI reports a dead Redis instead of queueing commands forever.
 * `rediss://` URLs get TLS and passwords in the URL are honoured by ioredis itself.
 */
export function createRedisConnection(
  url: string,
  role: RedisRole,
  extra: RedisOptions = {},
): Redis {
  const common: RedisOptions = { connectTimeout: 5_000, ...extra };
  const options: RedisOptions =
    role === 'worker'
      ? { ...common, maxRetriesPerRequest: null, enableReadyCheck: true }
      : {
          ...common,
          maxRetriesPerRequest: 2,
          enableOfflineQueue: true,
          retryStrategy: (times) => (times > 3 ? null : 200 * times),
        };
  const redis = new Redis(url, options);
  // Reconnects are ioredis's job; an unhandled 'error' event would kill the process.
  redis.on('error', () => undefined);
  return redis;
}

/** Fails fast, in one line naming the variable, when Redis cannot be reached. */
export async function checkRedis(
  url: string,
  variable = 'REDIS_URL',
  timeoutMs = 5_000,
): Promise<void> {
  const redis = new Redis(url, {
    lazyConnect: true,
    connectTimeout: timeoutMs,
    maxRetriesPerRequest: 0,
    enableOfflineQueue: false,
    retryStrategy: () => null,
  });
  redis.on('error', () => undefined);
  try {
    await redis.connect();
    await redis.ping();
  } catch (error) {
    throw new ServiceUnreachableError(
      variable,
      `cannot reach Redis at ${redactSecrets(url)} (${errorMessage(error) || 'connection failed'}); start Redis or set ${variable} to a reachable server`,
    );
  } finally {
    redis.disconnect();
  }
}
