import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, inject } from 'vitest';
import type { Database } from '@benchfleet/db';
import {
  createTestDatabase,
  deleteKeysWithPrefix,
  uniqueQueuePrefix,
  type TestDatabase,
} from './test-database.js';

export interface TestServices {
  /** URL of this file's own database. */
  databaseUrl: string;
  db: Database;
  redisUrl: string;
  /** This file's own BullMQ prefix. */
  prefix: string;
  /** Environment for child processes (workers, CLIs) pointed at this file's services. */
  env: NodeJS.ProcessEnv;
}

/** Call at the top of a test file: a fresh database and queue prefix for the file, dropped after it. */
export function useTestServices(): TestServices {
  const services = {} as TestServices;
  let database: TestDatabase | undefined;
  beforeAll(async () => {
    database = await createTestDatabase(inject('adminDatabaseUrl'), inject('templateDatabase'));
    services.databaseUrl = database.url;
    services.db = database.db;
    services.redisUrl = inject('redisUrl');
    services.prefix = uniqueQueuePrefix();
    services.env = {
      ...process.env,
      DATABASE_URL: database.url,
      REDIS_URL: services.redisUrl,
      BENCHFLEET_QUEUE_PREFIX: services.prefix,
      // Search snapshots this file's workers copy from its database: a directory of its own.
      BENCHFLEET_INDEX_CACHE: mkdtempSync(join(tmpdir(), 'benchfleet-index-cache-')),
      LOG_LEVEL: process.env.LOG_LEVEL ?? 'warn',
    };
  });
  afterAll(async () => {
    await database?.drop();
    if (services.env?.BENCHFLEET_INDEX_CACHE)
      rmSync(services.env.BENCHFLEET_INDEX_CACHE, { recursive: true, force: true });
    if (services.prefix) await deleteKeysWithPrefix(services.redisUrl, services.prefix);
  });
  return services;
}
