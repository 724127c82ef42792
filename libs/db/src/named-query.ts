import { CompiledQuery } from 'kysely';
import type { Database } from './database.js';

/**
 * A read-only query kept as SQL text with psql-style `:name` variables, so that the very text a
 * program runs can be shown to a user and pasted into psql.
 */
export interface NamedQuery<P extends string = string> {
  name: string;
  title: string;
  sql: string;
  params: readonly P[];
}

type QueryValue = string | number | boolean | null;
export type QueryValues<P extends string> = Record<P, QueryValue>;

// `:name` but not the `::type` of a cast.
const VARIABLE = /(?<![:\w]):([a-z_][a-z0-9_]*)/g;

export function defineQuery<const P extends string>(query: NamedQuery<P>): NamedQuery<P> {
  const used = new Set([...query.sql.matchAll(VARIABLE)].map((match) => match[1]));
  const declared = new Set<string>(query.params);
  const undeclared = [...used].filter((name) => name !== undefined && !declared.has(name));
  const unused = [...declared].filter((name) => !used.has(name));
  if (undeclared.length || unused.length) {
    throw new Error(
      `query ${query.name}: variables ${undeclared.join(', ') || '(none)'} are not declared; ${unused.join(', ') || '(none)'} are unused`,
    );
  }
  return query;
}

/** The text with `$1…$n` placeholders and their values, as sent to Postgres. */
function compileNamedQuery<P extends string>(
  query: NamedQuery<P>,
  values: QueryValues<P>,
): { text: string; values: QueryValue[] } {
  const order: P[] = [];
  const text = query.sql.replace(VARIABLE, (_, name: P) => {
    let index = order.indexOf(name);
    if (index < 0) index = order.push(name) - 1;
    return `$${index + 1}`;
  });
  return { text, values: order.map((name) => values[name]) };
}

/** A Postgres literal (standard_conforming_strings, the default since 9.1). */
function sqlLiteral(value: QueryValue): string {
  if (value === null) return 'null';
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw new Error(`${value} has no SQL literal`);
    return String(value);
  }
  if (typeof value === 'boolean') return value ? 'true' : 'false';
  return `'${value.replaceAll("'", "''")}'`;
}

/** The text with each variable replaced by its literal: runnable in psql as it stands. */
export function inlineNamedQuery<P extends string>(
  query: NamedQuery<P>,
  values: QueryValues<P>,
): string {
  return query.sql.replace(VARIABLE, (_, name: P) => sqlLiteral(values[name])).trim();
}

/** `psql -v run="'…'"` flags that make the `:name` text itself runnable with `psql -f`. */
export function psqlVariableFlags<P extends string>(
  query: NamedQuery<P>,
  values: QueryValues<P>,
): string {
  return query.params
    .map((name) => `-v ${name}="${sqlLiteral(values[name]).replace(/["\\$`]/g, (c) => `\\${c}`)}"`)
    .join(' ');
}

export async function runNamedQuery<R, P extends string>(
  db: Database,
  query: NamedQuery<P>,
  values: QueryValues<P>,
): Promise<R[]> {
  const { text, values: parameters } = compileNamedQuery(query, values);
  const result = await db.executeQuery<R>(CompiledQuery.raw(text, parameters));
  return result.rows;
}
