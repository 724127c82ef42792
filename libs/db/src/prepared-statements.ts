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

/** A node-postgres client that sends statements starting with the `prepared` mark as named (prepared) statements. */
export class PreparingClient extends pg.Client {
  // pg's `query` has a dozen overloads; the one Kysely calls is (text, values).
  override query(...args: unknown[]): never {
    const [config, values, callback] = args;
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
      return (super.query as (...rest: unknown[]) => never)(
        named,
        ...(callback === undefined ? [] : [callback]),
      );
    }
    return (super.query as (...rest: unknown[]) => never)(...args);
  }
}
