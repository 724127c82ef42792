import { Redis, type RedisOptions } from 'ioredis';
import {
  ServiceRefusedUrlError,
  ServiceUnreachableError,
  errorMessage,
  redactSecrets,
} from '@benchfleet/core';

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
    // ioredis only logs a SELECT the server refused, then works on database 0: ask again, loudly.
    const index = Number(new URL(url).pathname.slice(1) || 0);
    if (index > 0) await redis.select(index);
  } catch (error) {
    // A Redis that answered but has no database of the URL's index: the URL is what to fix.
    const reply = errorMessage(error);
    if (/^ERR DB index is out of range/.test(reply))
      throw new ServiceRefusedUrlError(
        variable,
        `Redis at ${redactSecrets(url)} answers, but has no database ${new URL(url).pathname.slice(1)} (its config \`databases\` sets how many, 16 by default: 0-15); give an index it has`,
      );
    throw new ServiceUnreachableError(
      variable,
      `cannot reach Redis at ${redactSecrets(url)} (${errorMessage(error) || 'connection failed'}); start Redis or set ${variable} to a reachable server`,
    );
  } finally {
    redis.disconnect();
  }
}
