import { describe, expect, it } from 'vitest';
import { checkRedis, createRedisConnection } from './redis-connection.js';

describe('createRedisConnection', () => {
  it('takes TLS from rediss:// and the password from the URL; workers never give up on a command', () => {
    const sut = createRedisConnection('rediss://:s3cret@redis.example:6380/2', 'worker', {
      lazyConnect: true,
    });
    try {
      expect(sut.options.tls).toBeTruthy();
      expect(sut.options.password).toBe('s3cret');
      expect(sut.options.port).toBe(6380);
      expect(sut.options.db).toBe(2);
      expect(sut.options.maxRetriesPerRequest).toBeNull();
    } finally {
      sut.disconnect();
    }
  });

  it('gives producers a bounded number of retries so a CLI fails fast', () => {
    const sut = createRedisConnection('redis://127.0.0.1:6379', 'producer', { lazyConnect: true });
    try {
      expect(sut.options.tls).toBeFalsy();
      expect(sut.options.maxRetriesPerRequest).toBe(2);
    } finally {
      sut.disconnect();
    }
  });
});

describe('checkRedis', () => {
  it('names the variable and hides the password when Redis is unreachable', async () => {
    const error = await checkRedis('redis://:hunter2@127.0.0.1:1', 'REDIS_URL', 1_000).catch(
      (e: unknown) => e as Error,
    );
    expect(error).toBeInstanceOf(Error);
    expect((error as Error).message).toMatch(
      /^REDIS_URL: cannot reach Redis at redis:\/\/:\*\*\*@127\.0\.0\.1:1/,
    );
    expect((error as Error).message).not.toContain('hunter2');
  });
});
