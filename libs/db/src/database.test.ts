import { sql } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { TcpRelay, useTestServices } from '@benchfleet/testing';
import { checkDatabase, createDatabase, type Database } from './database.js';
import { PostgresTimeoutError } from './prepared-statements.js';

// Deadlines on a Postgres behind a relay that can drop every packet (a blackhole: nothing is
// refused, nothing arrives), where a call without one would wait for the kernel (~15 minutes).

const services = useTestServices();
const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function relayedDatabase(
  options: Parameters<typeof createDatabase>[1],
): Promise<{ relay: TcpRelay; db: Database; url: string }> {
  const target = new URL(services.databaseUrl);
  const relay = await TcpRelay.open(target.hostname, Number(target.port || 5432));
  const url = relay.rewrite(services.databaseUrl);
  const db = createDatabase(url, options);
  cleanups.push(async () => {
    relay.forward();
    await db.destroy();
    await relay.close();
  });
  return { relay, db, url };
}

describe('createDatabase', () => {
  it('gives each session the server side of its deadlines', async () => {
    const { db } = await relayedDatabase({
      statementTimeoutMs: 7_000,
      idleInTransactionTimeoutMs: 9_000,
      keepAliveMs: 4_000,
    });
    const settings = await sql<{ name: string; setting: string }>`
      select name, setting from pg_settings
      where name in ('statement_timeout', 'idle_in_transaction_session_timeout', 'tcp_keepalives_idle', 'tcp_keepalives_count')
      order by name`.execute(db);
    expect(Object.fromEntries(settings.rows.map((row) => [row.name, row.setting]))).toEqual({
      idle_in_transaction_session_timeout: '9000',
      statement_timeout: '7000',
      tcp_keepalives_count: '3',
      tcp_keepalives_idle: '4',
    });
    await expect(sql`select pg_sleep(8)`.execute(db)).rejects.toThrow(
      /canceling statement due to statement timeout/,
    );
  });

  // Once: no deadline anywhere; a blackholed worker kept 16 tasks `running` for a 240 s partition.
  it('fails a query that gets no answer, drops its connection, and works again once the network does', async () => {
    const { relay, db } = await relayedDatabase({ max: 1, queryTimeoutMs: 1_500 });
    expect((await sql<{ one: number }>`select 1 as one`.execute(db)).rows).toEqual([{ one: 1 }]);
    relay.blackhole();
    const hung = await sql`select 1`.execute(db).catch((error: unknown) => error);
    expect(hung).toBeInstanceOf(PostgresTimeoutError);
    relay.forward();
    // The only connection of the pool was destroyed, not queued behind the hung query.
    expect((await sql<{ two: number }>`select 2 as two`.execute(db)).rows).toEqual([{ two: 2 }]);
  });

  it('fails to connect within the connect deadline when the greeting never comes', async () => {
    const { relay, db } = await relayedDatabase({ max: 1, connectTimeoutMs: 1_000 });
    relay.blackhole();
    await expect(sql`select 1`.execute(db)).rejects.toThrow(/timeout/i);
  });
});

describe('checkDatabase', () => {
  // Once: `select 1` had no deadline of its own and the check waited as long as the network did.
  it('fails in one line naming the variable when Postgres takes connections but never answers', async () => {
    const { relay, url } = await relayedDatabase({});
    relay.blackhole();
    await expect(checkDatabase(url, 'DATABASE_URL', 1_000)).rejects.toThrow(
      /^DATABASE_URL: cannot reach Postgres at postgres:\/\/.*(timeout|no answer)/,
    );
  });
});
