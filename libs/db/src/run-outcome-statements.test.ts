import { describe, expect, it } from 'vitest';
import { compileOnlyDatabase, sqlSnapshot } from '../test-support/compile-only-database.js';
import {
  cancelOpenTasksStatement,
  cancelRunStatement,
  finishRunStatement,
  haltForBudgetStatement,
  haltOnInfraErrorsStatement,
  liftInfraHaltStatement,
  markQueuedStatement,
} from './run-outcome-statements.js';

const db = compileOnlyDatabase();

// A change to a statement that decides a run's outcome changes its snapshot, so it shows in review.
// After a deliberate change: `npx vitest run -u libs/db/src/run-outcome-statements.test.ts`, snapshots in the same commit.
describe("the SQL of the statements that decide a run's outcome", () => {
  it('cancel: the run, then its open tasks and running attempts', async () => {
    await expect(sqlSnapshot(cancelRunStatement(db, 'run-1').compile())).toMatchFileSnapshot(
      './__snapshots__/cancel-run.sql',
    );
    await expect(sqlSnapshot(cancelOpenTasksStatement('run-1').compile(db))).toMatchFileSnapshot(
      './__snapshots__/cancel-open-tasks.sql',
    );
  });

  it('finish: the summary (the aggregate) stored, the run finished unless cancelled', async () => {
    const statement = finishRunStatement(db, 'run-1', { succeeded: 1 }, new Date(0));
    await expect(sqlSnapshot(statement.compile())).toMatchFileSnapshot(
      './__snapshots__/finish-run.sql',
    );
  });

  it('queued again for a resume or retry', async () => {
    await expect(sqlSnapshot(markQueuedStatement(db, 'run-1').compile())).toMatchFileSnapshot(
      './__snapshots__/mark-run-queued.sql',
    );
  });

  it('the run-level fence: stopped at its spend limit (its open tasks end with budget), paused on infra errors, the pause lifted', async () => {
    await expect(
      sqlSnapshot(
        haltForBudgetStatement('run-1', 'the run spend limit of $1 is reached').compile(db),
      ),
    ).toMatchFileSnapshot('./__snapshots__/halt-for-budget.sql');
    await expect(sqlSnapshot(haltOnInfraErrorsStatement('run-1').compile(db))).toMatchFileSnapshot(
      './__snapshots__/halt-on-infra-errors.sql',
    );
    await expect(sqlSnapshot(liftInfraHaltStatement(db, 'run-1').compile())).toMatchFileSnapshot(
      './__snapshots__/lift-infra-halt.sql',
    );
  });
});
