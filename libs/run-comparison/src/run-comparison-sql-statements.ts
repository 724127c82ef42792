import { runNamedQuery, type SqlStatementList } from '@benchfleet/db';
import { comparisonCoverageQuery, pairedTasksQuery } from './run-comparison-queries.js';

// The named queries of a comparison, with example arguments, for the SQL snapshot test (see
// SqlStatementList, @benchfleet/db).

const pair = { run_a: 'run-a', run_b: 'run-b' };

/** The comparison's statements: its paired tasks and the coverage of each run. */
export const runComparisonSqlStatements: SqlStatementList = {
  sourceDir: new URL('./', import.meta.url),
  snapshotDir: new URL('./__snapshots__/', import.meta.url),
  statements: [
    {
      name: 'query.paired-tasks',
      source: pairedTasksQuery.name,
      run: (db) => runNamedQuery(db, pairedTasksQuery, pair),
    },
    {
      name: 'query.comparison-coverage',
      source: comparisonCoverageQuery.name,
      run: (db) => runNamedQuery(db, comparisonCoverageQuery, pair),
    },
  ],
};
