import { Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';
import {
  ServiceRefusedUrlError,
  ServiceUnreachableError,
  errorMessage,
  redactSecrets,
} from '@benchfleet/core';
import { PreparingClient } from './prepared-statements.js';
import type { DB } from './schema.js';

// int8 (counts, sums) and numeric come back as strings by default; our values fit in a double.
pg.types.setTypeParser(pg.types.builtins.INT8, (value: string) => Number(value));
pg.types.setTypeParser(pg.types.builtins.NUMERIC, (value: string) => Number(value));

export type Database = Kysely<DB>;

export interface DatabaseOptions {
  max?: number;
  connectTimeoutMs?: number;
  /** Name of the variable the URL came from, for error messages. */
  variable?: string;
}

export function createDatabase(url: string, options: DatabaseOptions = {}): Database {
  const pool = new pg.Pool({
    Client: PreparingClient,
    connectionString: url,
    // Prepared statements (only the hot ones are) use one plan made once, not one per call.
    options: '-c plan_cache_mode=force_generic_plan',
    max: options.max ?? 10,
    connectionTimeoutMillis: options.connectTimeoutMs ?? 5_000,
    idleTimeoutMillis: 30_000,
  });
  // A client that loses its server (a restart terminates every connection with 57P01) must not
  // crash the process, whether idle in the pool ('error' on the pool) or checked out between two
  // queries ('error' on the client, which the pool does not listen to then). The query in flight
  // fails on its own; the pool replaces the broken client.
  pool.on('error', () => undefined);
  pool.on('connect', (client) => client.on('error', () => undefined));
  const db = new Kysely<DB>({ dialect: new PostgresDialect({ pool }) });
  pools.set(db, pool);
  return db;
}

const pools = new WeakMap<Database, pg.Pool>();

/**
 * Runs `use` with a client of the database's own pool, for the few things Kysely cannot say (a
 * COPY stream). A client whose work failed is dropped rather than reused.
 */
export async function withPostgresClient<T>(
  db: Database,
  use: (client: pg.PoolClient) => Promise<T>,
): Promise<T> {
  const pool = pools.get(db);
  if (!pool) throw new Error('this Database was not made by createDatabase');
  const client = await pool.connect();
  try {
    const result = await use(client);
    client.release();
    return result;
  } catch (error) {
    client.release(error instanceof Error ? error : true);
    throw error;
  }
}

/** What a Postgres that answered refused about the URL (SQLSTATE 3D000, 28000, 28P01), if that was it. */
function refusedUrl(url: string, error: unknown): string | undefined {
  const code = (error as { code?: unknown }).code;
  const at = `Postgres at ${redactSecrets(url)}`;
  if (code === '3D000') {
    const parsed = new URL(url);
    const name = decodeURIComponent(parsed.pathname.slice(1));
    const user = decodeURIComponent(parsed.username) || 'postgres';
    const create = `createdb -h ${parsed.hostname || '127.0.0.1'} -p ${parsed.port || '5432'} -U ${user} ${name}`;
    return `${at} answers, but has no database "${name}": create it (${create}), then run \`scheduler migrate\``;
  }
  if (code === '28000' || code === '28P01')
    return `${at} refused the login (${errorMessage(error)}): fix the user or password in the URL`;
  return undefined;
}

/** Fails fast, in one line naming the variable, when Postgres cannot be reached. */
export async function checkDatabase(
  url: string,
  variable = 'DATABASE_URL',
  timeoutMs = 5_000,
): Promise<void> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: timeoutMs });
  client.on('error', () => undefined);
  try {
    await client.connect();
    await client.query('select 1');
  } catch (error) {
    const refused = refusedUrl(url, error);
    if (refused) throw new ServiceRefusedUrlError(variable, refused);
    throw new ServiceUnreachableError(
      variable,
      `cannot reach Postgres at ${redactSecrets(url)} (${errorMessage(error) || 'connection failed'}); start Postgres or set ${variable} to a reachable server`,
    );
  } finally {
    await client.end().catch(() => undefined);
  }
}
