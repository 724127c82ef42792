import {
  runNamedQuery,
  type Database,
  type ListedStatement,
  type NamedQuery,
  type QueryValues,
  type SqlStatementList,
} from '@benchfleet/db';
import {
  domainsQueryFor,
  runGradeQueryFor,
  runsListQueryFor,
  runTaskGradesQueryFor,
  taskGradeQueryFor,
} from './grade-queries.js';
import { gridCellsQuery, gridRunsQuery } from './grid-queries.js';
import { runsCursorQuery } from './kept-answers.js';
import { runSpendQuery } from './llm-usage.js';
import { comparedConfigurationsQuery } from './routes/compare-routes.js';
import {
  durationDistributionQuery,
  failuresQueryFor,
  pairedSearchQuery,
  runBenchmarkQuery,
  runCursorQueryFor,
  runEpochsQuery,
  runQuery,
  stepsDistributionQuery,
  taskListQueriesFor,
  taskSearchQuery,
} from './run-queries.js';
import { phaseQueriesFor, runTimelineQuery } from './run-time-queries.js';
import { attemptsQuery, screenshotQuery, stepsQuery, taskQuery } from './task-queries.js';

// Every named query the dashboard runs, with example arguments, for the SQL snapshot test (see
// SqlStatementList, @benchfleet/db; checked by dashboard-sql-statements.test.ts). A query built
// from a benchmark's SQL is listed twice: without it, and with an example of that SQL (no
// benchmark named: the dashboard is a shared room), each as the dashboard would build it.

/** A benchmark's grade: SQL over the task row `t` giving its `score`, no row when ungraded. */
const EXAMPLE_GRADE_SQL = 'select t.reward as score where t.reward is not null';
/** A benchmark's failure reason: an expression over the task row `t`. */
const EXAMPLE_REASON_SQL = "nullif(t.final_api_status, '')";
/** A benchmark's phase record: a jsonb expression over the attempt row `a`, null when unrecorded. */
const EXAMPLE_PHASES_SQL = "case when a.status = 'success' then jsonb_build_object('agent', 1) end";

const run = { run: 'run-1' };
const task = { run: 'run-1', task: 'task-1' };
const pair = { run_a: 'run-a', run_b: 'run-b' };

/** An entry running `query` with `values`: its source is the query's name. */
function entry<P extends string>(
  name: string,
  query: NamedQuery<P>,
  values: QueryValues<P>,
): ListedStatement {
  return {
    name,
    source: query.name,
    run: (db: Database) => runNamedQuery(db, query, values),
  };
}

const runQueries: ListedStatement[] = [
  entry('run', runQuery, run),
  entry('run-epochs', runEpochsQuery, run),
  entry('run-benchmark', runBenchmarkQuery, run),
  entry('failures', failuresQueryFor(undefined), run),
  entry('failures.with-reason', failuresQueryFor(EXAMPLE_REASON_SQL), run),
  entry('steps-distribution', stepsDistributionQuery, run),
  entry('duration-distribution', durationDistributionQuery, run),
  entry('tasks', taskListQueriesFor(undefined).all, run),
  entry('tasks.graded', taskListQueriesFor(EXAMPLE_GRADE_SQL).all, run),
  entry('changed-tasks', taskListQueriesFor(undefined).changed, {
    ...run,
    since: '2026-12-08T00:00:00.000Z',
  }),
  entry('changed-tasks.graded', taskListQueriesFor(EXAMPLE_GRADE_SQL).changed, {
    ...run,
    since: '2026-12-08T00:00:00.000Z',
  }),
  entry('task-search', taskSearchQuery, { ...run, q: 'lamp' }),
  entry('paired-task-search', pairedSearchQuery, { ...pair, q: 'lamp' }),
  entry('run-cursor', runCursorQueryFor(undefined), run),
  entry('run-cursor.graded', runCursorQueryFor(EXAMPLE_GRADE_SQL), run),
  entry('run-spend', runSpendQuery, run),
  entry('run-timeline', runTimelineQuery, { ...run, buckets: 60 }),
  entry('run-phases', phaseQueriesFor(undefined).run, run),
  entry('run-phases.recorded', phaseQueriesFor(EXAMPLE_PHASES_SQL).run, run),
  entry('task-phases', phaseQueriesFor(undefined).task, task),
  entry('task-phases.recorded', phaseQueriesFor(EXAMPLE_PHASES_SQL).task, task),
];

const gradeQueries: ListedStatement[] = [
  entry('runs-list', runsListQueryFor([]), {}),
  entry(
    'runs-list.graded',
    runsListQueryFor([{ benchmark: 'example', sql: EXAMPLE_GRADE_SQL }]),
    {},
  ),
  entry('run-grade', runGradeQueryFor(EXAMPLE_GRADE_SQL), run),
  entry('domains', domainsQueryFor(undefined), run),
  entry('domains.graded', domainsQueryFor(EXAMPLE_GRADE_SQL), run),
  entry('task-grade', taskGradeQueryFor(EXAMPLE_GRADE_SQL), task),
  entry('task-grades', runTaskGradesQueryFor(EXAMPLE_GRADE_SQL), run),
];

const otherQueries: ListedStatement[] = [
  entry('task', taskQuery, task),
  entry('attempts', attemptsQuery, task),
  entry('steps', stepsQuery, task),
  entry('screenshot', screenshotQuery, { ...task, attempt: 1, step: 3 }),
  entry('grid-runs', gridRunsQuery, { runs: '["run-a","run-b"]', q: '', benchmark: '', limit: 50 }),
  entry('grid-cells', gridCellsQuery, { runs: '["run-a","run-b"]', show: 'all', task: '' }),
  entry('runs-cursor', runsCursorQuery, { runs: '["run-a","run-b"]' }),
  entry('compared-configurations', comparedConfigurationsQuery, pair),
];

/** The dashboard's named queries. */
export const dashboardSqlStatements: SqlStatementList = {
  sourceDir: new URL('./', import.meta.url),
  snapshotDir: new URL('./__snapshots__/', import.meta.url),
  statements: [...runQueries, ...gradeQueries, ...otherQueries],
};
