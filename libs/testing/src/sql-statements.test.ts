import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CompiledQuery } from 'kysely';
import { describe, expect, it } from 'vitest';
import { benchmarks } from '@benchfleet/benchmarks';
import { dbSqlStatements, type SqlStatementList } from '@benchfleet/db';
import { runComparisonSqlStatements } from '@benchfleet/run-comparison';
import { benchmarkPackages } from '../../../benchmark-entries.mjs';
import {
  describeStatementList,
  expectCovered,
  explainEach,
  statementSourcesIn,
} from './statement-list-checks.js';
import { recordingDatabase } from './statement-recorder.js';
import { useTestServices } from './test-services.js';

// The SQL of every statement the repositories build, from one list per package (libs/db's,
// libs/run-comparison's and each registered benchmark's `sqlStatements`): each entry is run with
// its example arguments on a database that records what it is sent, its SQL compared with
// `__snapshots__/<name>.sql` beside the list, and each statement EXPLAINed by Postgres on the
// migrated schema (a statement Postgres would refuse fails here, not in a worker). Coverage is read
// from the sources, not kept by hand: every public method of an exported `…Repository` class,
// every exported `…Statement` builder and every named query (`defineQuery`) in those packages must
// be some entry's source. The dashboard's list is checked by its own test
// (apps/dashboard/src/dashboard-sql-statements.test.ts: no lib imports an app).
// After a deliberate change: `npx vitest run libs/testing/src/sql-statements.test.ts -u`.

const REPO_DIR = fileURLToPath(new URL('../../..', import.meta.url));
const services = useTestServices();

const lists: SqlStatementList[] = [dbSqlStatements, runComparisonSqlStatements];
for (const benchmark of benchmarks.all)
  if (benchmark.sqlStatements) lists.push(await benchmark.sqlStatements());

describe('the SQL of every listed statement', () => {
  it('is refused when Postgres would refuse it (a column the schema does not have)', async () => {
    const { db, recorded } = recordingDatabase();
    await db.selectFrom('runs').select('id').where('id', '=', 'run-1').execute();
    await explainEach(services.db, recorded);
    const wrong = CompiledQuery.raw('select no_such_column from runs where id = $1', ['run-1']);
    await expect(explainEach(services.db, [wrong])).rejects.toThrow(/no_such_column/);
  });

  for (const list of lists) describeStatementList(REPO_DIR, list, () => services.db);
});

describe('the statement lists', () => {
  it('cover every repository method, statement builder and named query of libs/db, libs/run-comparison and the benchmark packages', () => {
    const sources = statementSourcesIn(REPO_DIR, [
      join(REPO_DIR, 'libs/db/src'),
      join(REPO_DIR, 'libs/run-comparison/src'),
      ...benchmarkPackages(REPO_DIR).map((pkg) => join(pkg.dir, 'src')),
    ]);
    expectCovered(sources, lists);
    // The scan finds each kind it looks for, in the core, in a benchmark and in the comparison.
    expect([...sources.keys()]).toEqual(
      expect.arrayContaining([
        'RunsRepository.get',
        'settleStatement',
        'WebshopCatalogRepository.get',
        'paired_tasks',
      ]),
    );
  });
});
