import { SETTLED_TASK_STATUSES_SQL } from '@benchfleet/core';
import { defineQuery, runNamedQuery, type Database } from '@benchfleet/db';
import {
  compareRuns,
  type PairedTaskOutcome,
  type RunComparison,
  type RunCoverage,
} from './run-comparison.js';
import type { BootstrapOptions } from './paired-bootstrap.js';

// The SQL behind a comparison, one place for the CLI and the dashboard (which shows it as run).

export const pairedTasksQuery = defineQuery({
  name: 'paired_tasks',
  title: 'Tasks settled in both runs, paired by task id',
  params: ['run_a', 'run_b'],
  sql: `
select a.task_id, a.domain,
       a.status as status_a, b.status as status_b,
       coalesce(a.success, false) as success_a, coalesce(b.success, false) as success_b,
       coalesce(a.reward, 0)::float8 as reward_a, coalesce(b.reward, 0)::float8 as reward_b
from tasks a
join tasks b on b.run_id = :run_b and b.task_id = a.task_id
where a.run_id = :run_a
  and a.status in ${SETTLED_TASK_STATUSES_SQL}
  and b.status in ${SETTLED_TASK_STATUSES_SQL}
order by a.seq, a.task_id`,
});

export const comparisonCoverageQuery = defineQuery({
  name: 'comparison_coverage',
  title: 'Tasks of each run and how many could be paired',
  params: ['run_a', 'run_b'],
  sql: `
select r.id as run_id, r.name, r.benchmark,
       count(t.task_id)::int as tasks,
       count(*) filter (where t.status in ('queued', 'running'))::int as unsettled,
       count(*) filter (where not exists (
         select 1 from tasks o
         where o.run_id = case when r.id = :run_a then :run_b else :run_a end and o.task_id = t.task_id))::int as without_partner
from runs r
left join tasks t on t.run_id = r.id
where r.id in (:run_a, :run_b)
group by r.id
order by r.id = :run_b`,
});

export interface LoadedComparison {
  comparison: RunComparison;
  coverage: RunCoverage[];
  /** The tasks settled in both runs, in order. */
  pairs: PairedTaskOutcome[];
}

/** Reads the paired rows of two runs and compares them; missing runs are reported by `coverage`. */
export async function loadRunComparison(
  db: Database,
  runA: string,
  runB: string,
  options: BootstrapOptions = {},
): Promise<LoadedComparison> {
  const values = { run_a: runA, run_b: runB };
  const [pairs, coverage] = await Promise.all([
    runNamedQuery<PairedTaskOutcome, 'run_a' | 'run_b'>(db, pairedTasksQuery, values),
    runNamedQuery<RunCoverage, 'run_a' | 'run_b'>(db, comparisonCoverageQuery, values),
  ]);
  return { comparison: compareRuns(runA, runB, pairs, options), coverage, pairs };
}
