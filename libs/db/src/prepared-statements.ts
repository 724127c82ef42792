import { createHash } from 'node:crypto';
import { sql } from 'kysely';
import pg from 'pg';

const MARK = '/* prepared */ ';

/**
 * Put first in a `sql` template to have Postgres parse and plan the statement once per connection
 * instead of on every call. For the few statements every episode runs (opening an attempt,
 * writing steps, settling): planning them cost Postgres about as much as running them. Only for
 * statements whose text never varies (array parameters, not lists of placeholders): every distinct
 * text stays prepared on each pooled connection for its lifetime.
 */
export const prepared = sql.raw(MARK);

function statementName(text: string): string {
  return `bf_${createHash('sha1').update(text).digest('hex').slice(0, 20)}`;
}

/** Postgres gave no answer at all within the client's deadline; the connection was dropped. */
export class PostgresTimeoutError extends Error {
  override readonly name = 'PostgresTimeoutError';
  readonly code = 'ETIMEDOUT';
  constructor(readonly timeoutMs: number) {
    super(
      `Postgres did not answer within ${Math.round(timeoutMs / 100) / 10} s (the connection was dropped)`,
    );
  }
}

/**
 * A node-postgres client that sends statements starting with the `prepared` mark as named
 * (prepared) statements, and gives every query a deadline (`queryDeadlineMs` in its config): a
 * query unanswered by then fails with `PostgresTimeoutError` and the connection is destroyed, so
 * the pool replaces it instead of queueing the next query behind one that will never end (pg's own
 * `query_timeout` leaves the connection waiting).
 */
export class PreparingClient extends pg.Client {
  /** 0: no client-side deadline. */
  queryDeadlineMs: number;

  constructor(config?: pg.ClientConfig & { queryDeadlineMs?: number }) {
    super(config);
    this.queryDeadlineMs = config?.queryDeadlineMs ?? 0;
  }

  // pg's `query` has a dozen overloads; the one Kysely calls is (text, values).
  override query(...args: unknown[]): never {
    const [config, values, callback] = args;
    let result: unknown;
    if (
      typeof config === 'string' &&
      config.startsWith(MARK) &&
      (values === undefined || Array.isArray(values))
    ) {
      const named: pg.QueryConfig = {
        name: statementName(config),
        text: config,
        values: values as unknown[] | undefined,
      };
      result = (super.query as (...rest: unknown[]) => unknown)(
        named,
        ...(callback === undefined ? [] : [callback]),
      );
    } else result = (super.query as (...rest: unknown[]) => unknown)(...args);
    return this.withDeadline(result) as never;
  }

  /** Promise-style queries only: a stream (COPY) is bounded by the server's statement_timeout. */
  private withDeadline(result: unknown): unknown {
    const deadline = this.queryDeadlineMs;
    if (!deadline || !(result instanceof Promise)) return result;
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        // Marked unusable before its release (the socket's close comes later), so the pool drops
        // it; `_queryable` is what pg-pool reads to decide.
        const client = this as unknown as {
          _queryable: boolean;
          connection: { stream: { destroy(): void } };
        };
        client._queryable = false;
        reject(new PostgresTimeoutError(deadline));
        client.connection.stream.destroy();
      }, deadline);
    });
    return Promise.race([result, timedOut]).finally(() => clearTimeout(timer));
  }
}
