import {
  Kysely,
  PostgresAdapter,
  PostgresIntrospector,
  PostgresQueryCompiler,
  type CompiledQuery,
  type DatabaseConnection,
  type Driver,
  type KyselyPlugin,
  type QueryResult,
} from 'kysely';
import type { Database } from '@benchfleet/db';

/** What a recording database was sent: statements, and where transactions began and ended. */
export type RecordedStatement = CompiledQuery | 'begin' | 'commit' | 'rollback';

/**
 * A Kysely that compiles as Postgres receives statements and never connects: every statement is
 * recorded and answered with no rows, so a repository method run on it shows what it sends.
 */
export function recordingDatabase(): { db: Database; recorded: RecordedStatement[] } {
  const recorded: RecordedStatement[] = [];
  const connection: DatabaseConnection = {
    executeQuery<R>(compiled: CompiledQuery): Promise<QueryResult<R>> {
      recorded.push(compiled);
      return Promise.resolve({ rows: [] });
    },
    streamQuery() {
      throw new Error('the recording database does not stream');
    },
  };
  const driver: Driver = {
    init: () => Promise.resolve(),
    acquireConnection: () => Promise.resolve(connection),
    beginTransaction: () => Promise.resolve(void recorded.push('begin')),
    commitTransaction: () => Promise.resolve(void recorded.push('commit')),
    rollbackTransaction: () => Promise.resolve(void recorded.push('rollback')),
    releaseConnection: () => Promise.resolve(),
    destroy: () => Promise.resolve(),
  };
  const db = new Kysely({
    dialect: {
      createAdapter: () => new PostgresAdapter(),
      createDriver: () => driver,
      createIntrospector: (kysely) => new PostgresIntrospector(kysely),
      createQueryCompiler: () => new PostgresQueryCompiler(),
    },
  }) as Database;
  return { db, recorded };
}

/**
 * `db` with the SQL of every statement Kysely builds for it kept in `statements`, in order: to
 * prove that a piece of code sends nothing, or only what it says.
 */
export function countingDatabase(db: Database): { db: Database; statements: string[] } {
  const statements: string[] = [];
  const executor = db.getExecutor();
  const plugin: KyselyPlugin = {
    transformQuery({ node, queryId }) {
      statements.push(executor.compileQuery(node, queryId).sql);
      return node;
    },
    transformResult: ({ result }) => Promise.resolve(result),
  };
  return { db: db.withPlugin(plugin), statements };
}

/** A parameter as the snapshot shows it; a Date is only named (a statement may take the clock's). */
function parameterText(value: unknown): string {
  if (value instanceof Date) return '<Date>';
  if (Buffer.isBuffer(value)) return `<${value.length} bytes>`;
  return JSON.stringify(value);
}

/** The text without the indentation of the template it was written in (a first line keeps none). */
function dedented(text: string): string {
  const [first = '', ...rest] = text
    .replace(/^\s*\n/, '')
    .trimEnd()
    .split('\n');
  const indents = rest.filter((line) => line.trim()).map((line) => line.search(/\S/));
  const common = indents.length > 0 ? Math.min(...indents) : 0;
  return [first.trimStart(), ...rest.map((line) => line.slice(common))].join('\n');
}

/**
 * A statement's text and, below it, its parameters: a query builder sends constants such as
 * `status = 'running'` as parameters, and a change to them must show in the snapshot too.
 */
function statementText(compiled: CompiledQuery): string {
  const parameters = compiled.parameters.map(
    (value, index) => `-- $${index + 1} = ${parameterText(value)}`,
  );
  return [dedented(compiled.sql), '', '-- parameters:', ...parameters].join('\n');
}

/** What a snapshot file holds: each recorded statement in order, transactions marked. */
export function sqlSnapshot(recorded: readonly RecordedStatement[]): string {
  const texts = recorded.map((statement) =>
    typeof statement === 'string' ? `-- ${statement}` : statementText(statement),
  );
  return `${texts.join('\n\n')}\n`;
}
