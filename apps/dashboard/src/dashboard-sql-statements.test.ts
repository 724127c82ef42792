import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import {
  describeStatementList,
  expectCovered,
  statementSourcesIn,
  useTestServices,
} from '@benchfleet/testing';
import { dashboardSqlStatements } from './dashboard-sql-statements.js';

// The dashboard's named queries, checked as libs/testing/src/sql-statements.test.ts checks the
// libs' lists (a lib may not import an app, so the dashboard's list is checked here): each entry's
// snapshot in `__snapshots__/<name>.sql` and its EXPLAIN on the migrated schema, and every
// `defineQuery` under apps/dashboard/src listed. After a deliberate change:
// `npx vitest run apps/dashboard/src/dashboard-sql-statements.test.ts -u`.

const REPO_DIR = fileURLToPath(new URL('../../..', import.meta.url));
const services = useTestServices();

describeStatementList(REPO_DIR, dashboardSqlStatements, () => services.db);

describe("the dashboard's statement list", () => {
  it('covers every named query of apps/dashboard/src', () => {
    const sources = statementSourcesIn(REPO_DIR, [fileURLToPath(dashboardSqlStatements.sourceDir)]);
    expectCovered(sources, [dashboardSqlStatements]);
    // The scan finds queries defined at the top of a module and inside a benchmark's factory.
    expect([...sources.keys()]).toEqual(expect.arrayContaining(['run', 'task_grade', 'tasks']));
  });
});
