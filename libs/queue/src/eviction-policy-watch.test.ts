import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '@benchfleet/core';
import { LocalRedis } from '@benchfleet/local-services';
import { EvictionPolicyWatch } from './eviction-policy-watch.js';
import { createRedisConnection } from './redis-connection.js';

// On a Redis of the test's own (its policy is changed here; the machine's is never touched).
let redis: LocalRedis;

beforeAll(async () => {
  redis = await LocalRedis.create();
});

afterAll(async () => {
  await redis?.destroy();
});

describe('EvictionPolicyWatch', () => {
  it('warns once per change to a policy that may evict queue keys, and not for noeviction', async () => {
    const lines: Array<{ msg: string; maxmemoryPolicy?: string }> = [];
    const logger = createLogger({
      destination: { write: (line: string) => void lines.push(JSON.parse(line)) },
    });
    const connection = createRedisConnection(redis.url, 'producer');
    try {
      const sut = new EvictionPolicyWatch(connection, logger);
      await connection.config('SET', 'maxmemory-policy', 'noeviction');
      await sut.check();
      expect(lines).toEqual([]);
      await connection.config('SET', 'maxmemory-policy', 'allkeys-lru');
      await sut.check();
      await sut.check();
      expect(lines.map((line) => line.maxmemoryPolicy)).toEqual(['allkeys-lru']);
      expect(lines[0]!.msg).toMatch(
        /maxmemory-policy is now allkeys-lru: .*set it back to noeviction/,
      );
      await connection.config('SET', 'maxmemory-policy', 'noeviction');
      await sut.check();
      await connection.config('SET', 'maxmemory-policy', 'volatile-ttl');
      await sut.check();
      expect(lines.map((line) => line.maxmemoryPolicy)).toEqual(['allkeys-lru', 'volatile-ttl']);
    } finally {
      connection.disconnect();
    }
  });
});
