import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import pg from 'pg';
import { createDatabase, migrateToLatest, type Database } from '@benchfleet/db';
import { benchmarks } from '@benchfleet/benchmarks';

function withDatabase(url: string, database: string): string {
  const parsed = new URL(url);
  parsed.pathname = `/${database}`;
  return parsed.toString();
}

async function admin<T>(adminUrl: string, work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

/** Creates and migrates a template database that every test file clones. */
export async function createTemplateDatabase(
  adminUrl: string,
): Promise<{ name: string; drop(): Promise<void> }> {
  const name = `benchfleet_tpl_${process.pid}_${randomBytes(3).toString('hex')}`;
  await admin(adminUrl, (client) => client.query(`create database "${name}"`));
  const db = createDatabase(withDatabase(adminUrl, name), { max: 2 });
  try {
    await migrateToLatest(db, benchmarks.migrations);
  } finally {
    await db.destroy();
  }
  return {
    name,
    drop: () =>
      admin(adminUrl, (client) =>
        client.query(`drop database if exists "${name}" with (force)`),
      ).then(() => undefined),
  };
}

export interface TestDatabase {
  url: string;
  name: string;
  db: Database;
  drop(): Promise<void>;
}

/** A fresh database cloned from the migrated template: each test file sees only its own rows. */
export async function createTestDatabase(
  adminUrl: string,
  template: string,
): Promise<TestDatabase> {
  const name = `benchfleet_test_${randomBytes(5).toString('hex')}`;
  await admin(adminUrl, (client) =>
    client.query(`create database "${name}" template "${template}"`),
  );
  const url = withDatabase(adminUrl, name);
  const db = createDatabase(url, { max: 10 });
  return {
    url,
    name,
    db,
    async drop() {
      await db.destroy();
      await admin(adminUrl, (client) =>
        client.query(`drop database if exists "${name}" with (force)`),
      );
    },
  };
}

export function uniqueQueuePrefix(): string {
  return `{bf-test-${randomBytes(4).toString('hex')}}`;
}

/** Removes every key under a queue prefix, so test and benchmark runs leave nothing in Redis. */
export async function deleteKeysWithPrefix(redisUrl: string, prefix: string): Promise<void> {
  const redis = new Redis(redisUrl, { lazyConnect: true, maxRetriesPerRequest: 1 });
  redis.on('error', () => undefined);
  try {
    await redis.connect();
    // Escape glob characters so that SCAN matches the prefix literally.
    const pattern = `${prefix.replace(/[{}[\]*?\\]/g, (c) => `\\${c}`)}:*`;
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
      cursor = next;
      if (keys.length) await redis.unlink(...keys);
    } while (cursor !== '0');
  } finally {
    redis.disconnect();
  }
}

export { withDatabase };
