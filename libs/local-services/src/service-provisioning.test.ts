import { describe, expect, inject, it } from 'vitest';
import { checkDatabase } from '@benchfleet/db';
import { checkRedis } from '@benchfleet/queue';
import { provisionServices, ServicesUnavailableError } from './service-provisioning.js';

// No URL in the environment and no Docker engine: the local-binaries path must work by itself.
const bareEnv = { PATH: process.env.PATH, HOME: process.env.HOME } as NodeJS.ProcessEnv;

describe('provisionServices', () => {
  it('takes TEST_* variables first when asked to', async () => {
    // The services this suite runs on stand in for a developer's own (they may be embedded here).
    const testDatabaseUrl = inject('adminDatabaseUrl');
    const testRedisUrl = inject('redisUrl');
    const services = await provisionServices({
      preferTestVariables: true,
      env: {
        ...bareEnv,
        TEST_DATABASE_URL: testDatabaseUrl,
        TEST_REDIS_URL: testRedisUrl,
        DATABASE_URL: 'postgres://nobody@127.0.0.1:1/x',
        REDIS_URL: 'redis://127.0.0.1:1',
      },
    });
    try {
      expect(services.source.postgres).toBe('environment');
      expect(services.databaseUrl).toBe(testDatabaseUrl);
      expect(services.redisUrl).toBe(testRedisUrl);
      await checkDatabase(services.databaseUrl);
    } finally {
      await services.stop();
    }
  });

  it('names the variable when a given URL is unreachable', async () => {
    await expect(
      provisionServices({ env: { ...bareEnv, DATABASE_URL: 'postgres://postgres@127.0.0.1:1/x' } }),
    ).rejects.toThrow(/DATABASE_URL: cannot reach Postgres/);
  });

  it('falls back to embedded Postgres and a redis-server from PATH', async () => {
    const services = await provisionServices({ env: bareEnv });
    try {
      expect(services.source.postgres).toMatch(/^embedded Postgres on port \d+$/);
      expect(services.source.redis).toMatch(/^redis-server on port \d+$/);
      await checkDatabase(services.databaseUrl);
      await checkRedis(services.redisUrl);
    } finally {
      await services.stop();
    }
    await expect(checkRedis(services.redisUrl, 'REDIS_URL', 1_000)).rejects.toThrow(/REDIS_URL/);
  });

  it('says how to provide Redis when nothing provides it', async () => {
    const error = await provisionServices({
      env: {
        HOME: process.env.HOME,
        PATH: '/nonexistent',
        DATABASE_URL: process.env.TEST_DATABASE_URL ?? '',
      },
    }).catch((e: unknown) => e);
    if (!process.env.TEST_DATABASE_URL) return expect(error).toBeInstanceOf(Error);
    expect(error).toBeInstanceOf(ServicesUnavailableError);
    expect(String(error)).toMatch(/set REDIS_URL .* install redis-server/);
  });
});
