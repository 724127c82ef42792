import {
  DummyDriver,
  Kysely,
  PostgresAdapter,
  PostgresIntrospector,
  PostgresQueryCompiler,
  type CompiledQuery,
} from 'kysely';
import type { Database } from '../src/database.js';

/**
 * A Kysely that compiles statements as Postgres would receive them and never connects: the SQL
 * snapshot tests compile outcome-deciding statements with it, without a database.
 */
export function compileOnlyDatabase(): Database {
  return new Kysely({
    dialect: {
      createAdapter: () => new PostgresAdapter(),
      createDriver: () => new DummyDriver(),
      createIntrospector: (db) => new PostgresIntrospector(db),
      createQueryCompiler: () => new PostgresQueryCompiler(),
    },
  });
}

/** A parameter as the snapshot shows it; a Date is only named (a statement may take the clock's). */
function parameterText(value: unknown): string {
  return value instanceof Date ? '<Date>' : JSON.stringify(value);
}

/** The text without the indentation of the template it was written in (a first line keeps none). */
function dedented(text: string): string {
  const [first = '', ...rest] = text
    .replace(/^\s*\n/, '')
    .trimEnd()
    .split('\n');
  const indents = rest.filter((line) => line.trim()).map((line) => line.search(/\S/));
  const common = Math.min(...indents);
  return [first.trimStart(), ...rest.map((line) => line.slice(common))].join('\n');
}

/**
 * The statement's text and, below it, its parameters: a query builder sends constants such as
 * `status = 'running'` as parameters, and a change to them must show in the snapshot too.
 */
export function sqlSnapshot(compiled: CompiledQuery): string {
  const parameters = compiled.parameters.map(
    (value, index) => `-- $${index + 1} = ${parameterText(value)}`,
  );
  return [dedented(compiled.sql), '', '-- parameters:', ...parameters, ''].join('\n');
}
