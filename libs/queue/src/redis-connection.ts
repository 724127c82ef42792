import { Redis, type RedisOptions } from 'ioredis';
import {
  ServiceRefusedUrlError,
  ServiceUnreachableError,
  UsageError,
  errorMessage,
  redactSecrets,
} from '@benchfleet/core';

export type RedisRole = 'worker' | 'producer';

/**
 * How long anything said to Redis may take. A command unanswered for `commandTimeoutMs` fails (a
 * network that drops packets would otherwise hold it for the ~15 minutes the kernel takes to give
 * up). Workers' connections wait longer than BullMQ's longest blocking read (10 s, plus its own
 * 1 s watchdog) so that an idle worker's wait for jobs never times out; a CLI has no blocking read
 * and fails sooner.
 */
export const REDIS_DEADLINES = {
  connectTimeoutMs: 5_000,
  keepAliveMs: 10_000,
  commandTimeoutMs: { worker: 20_000, producer: 10_000 } satisfies Record<RedisRole, number>,
} as const;

/**
 * Workers block on Redis and must survive its restarts (`maxRetriesPerRequest: null`: reconnect
 * for ever); producers fail fast so a CLI reports a dead Redis instead of queueing commands
 * forever. Every command has a deadline either way. `rediss://` URLs get TLS and passwords in the
 * URL are honoured by ioredis itself. `onError` hears the connection's errors (ioredis reconnects
 * by itself; without a listener an 'error' event would kill the process).
 */
export function createRedisConnection(
  url: string,
  role: RedisRole,
  extra: RedisOptions = {},
  onError: (error: Error) => void = () => undefined,
): Redis {
  const common: RedisOptions = {
    connectTimeout: REDIS_DEADLINES.connectTimeoutMs,
    keepAlive: REDIS_DEADLINES.keepAliveMs,
    commandTimeout: REDIS_DEADLINES.commandTimeoutMs[role],
    ...extra,
  };
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
  redis.on('error', onError);
  return redis;
}

/** What a reachable Redis says of itself at start. */
export interface RedisFacts {
  /** `maxmemory-policy` (from INFO, which managed services allow where CONFIG is refused). */
  maxmemoryPolicy: string | undefined;
}

/** Fails fast, in one line naming the variable, when Redis cannot be reached or does not answer. */
export async function checkRedis(
  url: string,
  variable = 'REDIS_URL',
  timeoutMs = 5_000,
): Promise<RedisFacts> {
  const redis = new Redis(url, {
    lazyConnect: true,
    connectTimeout: timeoutMs,
    commandTimeout: timeoutMs,
    maxRetriesPerRequest: 0,
    enableOfflineQueue: false,
    // The ready check's INFO would have no deadline of its own.
    enableReadyCheck: false,
    retryStrategy: () => null,
  });
  redis.on('error', () => undefined);
  let timer: NodeJS.Timeout | undefined;
  try {
    const answered = (async () => {
      await redis.connect();
      await redis.ping();
      // ioredis only logs a SELECT the server refused, then works on database 0: ask again, loudly.
      const index = Number(new URL(url).pathname.slice(1) || 0);
      if (index > 0) await redis.select(index);
      return { maxmemoryPolicy: maxmemoryPolicyOf(await redis.info('memory')) };
    })();
    answered.catch(() => undefined);
    return await Promise.race([
      answered,
      new Promise<never>(
        (_, reject) =>
          (timer = setTimeout(
            () => reject(new Error(`no answer within ${timeoutMs / 1000} s`)),
            timeoutMs,
          )),
      ),
    ]);
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
    clearTimeout(timer);
    redis.disconnect();
  }
}

/** The `maxmemory_policy` line of `INFO memory`. */
export function maxmemoryPolicyOf(info: string): string | undefined {
  return /^maxmemory_policy:(\S+)/m.exec(info)?.[1];
}

/**
 * BullMQ keeps a job in several keys (its hash, and its id in one list or set per state): a Redis
 * that evicts keys under memory pressure can leave a job half there, in no state, and nothing
 * would run it. Only `noeviction` (writes fail when memory is full) is safe.
 */
export function refuseEvictingRedis(url: string, facts: RedisFacts, variable = 'REDIS_URL'): void {
  const policy = facts.maxmemoryPolicy;
  if (policy === undefined || policy === 'noeviction') return;
  throw new UsageError(
    `${variable}: Redis at ${redactSecrets(url)} has maxmemory-policy ${policy}, which evicts queue keys under memory pressure (a job left in no state never runs); set maxmemory-policy noeviction (redis-cli CONFIG SET maxmemory-policy noeviction, or your provider's parameter group)`,
  );
}
