import { z } from 'zod';
import { describe, expect, it } from 'vitest';
import { ConfigError, databaseUrlSchema, parseConfig, redisUrlSchema } from './config.js';

describe('parseConfig', () => {
  const schema = z.object({
    databaseUrl: databaseUrlSchema,
    redisUrl: redisUrlSchema,
    concurrency: z.coerce.number().int().positive(),
  });
  const labels = {
    databaseUrl: 'DATABASE_URL',
    redisUrl: 'REDIS_URL',
    concurrency: '--concurrency',
  };

  it('returns typed values', () => {
    const config = parseConfig(
      schema,
      { databaseUrl: 'postgres://h/db', redisUrl: 'rediss://:pw@h:6380', concurrency: '8' },
      labels,
    );
    expect(config.concurrency).toBe(8);
  });

  it('reports every bad value in one message, by the name the user typed', () => {
    let error: unknown;
    try {
      parseConfig(schema, { databaseUrl: 'mysql://h', concurrency: '-1' }, labels);
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(ConfigError);
    const message = (error as ConfigError).message;
    expect(message).toMatch(/DATABASE_URL: must be a URL starting with postgres:/);
    expect(message).toMatch(/REDIS_URL: is required/);
    expect(message).toMatch(/--concurrency:/);
    expect((error as ConfigError).problems).toHaveLength(3);
  });
});
