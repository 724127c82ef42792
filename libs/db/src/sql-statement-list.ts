import type { Database } from './database.js';

// The statements a package's repositories build, listed once with example arguments: the SQL
// snapshot test (libs/testing/src/sql-statements.test.ts) runs each entry against a database that
// records what it is sent, compares the SQL with `__snapshots__/<name>.sql` and has Postgres
// EXPLAIN it on the migrated schema; a repository method, a `…Statement` builder or a named query
// that no entry covers fails the same test. Regenerate after a deliberate change:
// `npx vitest run libs/testing/src/sql-statements.test.ts -u`, snapshots in the same commit.

/** One statement (or one repository method's statements), run with example arguments. */
export interface ListedStatement {
  /** Its snapshot: `__snapshots__/<name>.sql` beside the list. */
  readonly name: string;
  /**
   * What builds it, as the source names it: `RunsRepository.get` (a repository method),
   * `settleStatement` (a statement builder) or `run-grading` (a named query's name).
   */
  readonly source: string;
  /**
   * Runs it with the example arguments against `db`, which records each statement and answers
   * with no rows: a repository method is called, a builder's statement executed, a named query run (`runNamedQuery`).
   */
  run(db: Database): Promise<unknown>;
}

/** A package's listed statements, and where its sources and snapshots are. */
export interface SqlStatementList {
  /** The package's `src/`, scanned for repositories, builders and named queries the list must cover. */
  readonly sourceDir: URL;
  /** Where the snapshots are written: `<sourceDir>/__snapshots__/`. */
  readonly snapshotDir: URL;
  readonly statements: readonly ListedStatement[];
  /**
   * Sources whose SQL is not a Kysely statement (a COPY stream on a pool client), each with why:
   * the coverage check accepts them, the snapshot cannot show them.
   */
  readonly notKysely?: Readonly<Record<string, string>>;
}
