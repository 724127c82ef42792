import { defineQuery, type NamedQuery } from '@benchfleet/db';
import { LIMITS_COLUMNS, TASK_LIMIT_JOIN } from './limits-queries.js';

// The queries that show a benchmark's grade (its `display.grade`: SQL over the task row `t` giving
// the task's score, no row when ungraded) beside the success as recorded. Each is built once per
// benchmark from its descriptor; a task passes the grade when its score is 1, and the graded
// success rate counts the tasks with a score and a recorded success flag, as the claimed rate does.

/** The grade's row for the task `t`: `graded` true and its `score`, or no row. */
const gradeOf = (gradeSql: string) => `(select true as graded, x.score from (
  ${gradeSql.trim().replace(/\n/g, '\n  ')}
) x)`;

/** Aggregates over `t` laterally joined with its grade as `gr` (inner join: graded tasks only). */
const GRADE_AGGREGATES = `count(*)::int as graded, count(gr.score)::int as scored,
       round(avg((gr.score = 1)::int) filter (where gr.score is not null and t.success is not null)::numeric, 4)::float8 as graded_success_rate,
       round(avg(gr.score)::numeric, 4)::float8 as mean_score`;

const NO_GRADE_COLUMNS = `null::int as graded, null::int as scored, null::float8 as graded_success_rate, null::float8 as mean_score`;

/** A benchmark's grade, for the queries that span every benchmark (the runs list). */
export interface BenchmarkGradeSql {
  readonly benchmark: string;
  readonly sql: string;
}

const literal = (text: string) => `'${text.replaceAll("'", "''")}'`;

export function runsListQueryFor(grades: readonly BenchmarkGradeSql[]): NamedQuery<never> {
  // One lateral per run; for a run of a benchmark without a grade its filter is false at once.
  const graded = grades
    .map(
      (grade) => `  select ${GRADE_AGGREGATES}
  from tasks t
  cross join lateral ${gradeOf(grade.sql)} gr
  where t.run_id = s.run_id and s.benchmark = ${literal(grade.benchmark)}`,
    )
    .join('\n  union all\n');
  return defineQuery({
    name: 'runs_list',
    title:
      'Runs with their progress, both scores, mean reward, cost against their limits and fence (and grade, where graded)',
    params: [],
    sql: `
select s.run_id, s.name, s.benchmark, s.run_status, r.model, r.agent,
       s.total, s.queued, s.running, s.succeeded, s.failed, s.cancelled, s.errors, s.never_started,
       s.success_rate, s.avg_reward, s.cost_usd,
       s.created_at, r.started_at, r.finished_at,
       r.summary is not null and (r.summary->>'pending')::int = 0 as summarised,
       ${LIMITS_COLUMNS},
       ${grades.length === 0 ? NO_GRADE_COLUMNS : 'g.graded, g.scored, g.graded_success_rate, g.mean_score'}
from run_summary s
join runs r on r.id = s.run_id${TASK_LIMIT_JOIN}${
      grades.length === 0
        ? ''
        : `
left join lateral (
  select sum(graded)::int as graded, sum(scored)::int as scored,
         max(graded_success_rate) as graded_success_rate, max(mean_score) as mean_score
  from (
${graded}
  ) per_benchmark
) g on true`
    }
order by s.created_at desc`,
  });
}

/** The run page's grade numbers (`run_grade`). */
export function runGradeQueryFor(gradeSql: string): NamedQuery<'run'> {
  return defineQuery({
    name: 'run_grade',
    title:
      "The run's grade beside its recorded success: graded and scored tasks, graded success rate, mean score",
    params: ['run'],
    sql: `
select ${GRADE_AGGREGATES}
from tasks t
cross join lateral ${gradeOf(gradeSql)} gr
where t.run_id = :run`,
  });
}

/** Per domain, with the grade's numbers where the benchmark has one. */
export function domainsQueryFor(gradeSql: string | undefined): NamedQuery<'run'> {
  const base = `d.domain, d.total, d.succeeded, d.failed, d.cancelled, d.errors, d.pending, d.success_rate, d.avg_reward, d.avg_steps, d.cost_usd`;
  return defineQuery({
    name: 'domains',
    title: gradeSql ? 'Per-domain results, with the grade' : 'Per-domain results',
    params: ['run'],
    sql:
      gradeSql === undefined
        ? `
select ${base}
from domain_summary d
where d.run_id = :run
order by d.domain`
        : `
select ${base},
       g.graded, g.scored, g.graded_success_rate, g.mean_score
from domain_summary d
left join lateral (
  select ${GRADE_AGGREGATES}
  from tasks t
  cross join lateral ${gradeOf(gradeSql)} gr
  where t.run_id = d.run_id and t.domain = d.domain
) g on true
where d.run_id = :run
order by d.domain`,
  });
}

/** One task's grade (`task_grade`): a row when it has one. */
export function taskGradeQueryFor(gradeSql: string): NamedQuery<'run' | 'task'> {
  return defineQuery({
    name: 'task_grade',
    title: "The task's grade (its score; no row: not graded)",
    params: ['run', 'task'],
    sql: `
select gr.graded, gr.score
from tasks t
cross join lateral ${gradeOf(gradeSql)} gr
where t.run_id = :run and t.task_id = :task`,
  });
}

/** Every graded task of a run with its score (`task_grades`), for the comparison's flipped tasks. */
export function runTaskGradesQueryFor(gradeSql: string): NamedQuery<'run'> {
  return defineQuery({
    name: 'task_grades',
    title: 'The grade of every graded task of a run',
    params: ['run'],
    sql: `
select t.task_id, gr.score
from tasks t
cross join lateral ${gradeOf(gradeSql)} gr
where t.run_id = :run
order by t.seq`,
  });
}

/**
 * The task list's columns: the table's, the instruction (cut, as the table shows it), and the
 * grade's score and whether there is one, for a benchmark with a grade.
 */
export function taskListSelect(gradeSql: string | undefined): { columns: string; join: string } {
  return gradeSql === undefined
    ? { columns: '', join: '' }
    : {
        columns: ', gr.score, gr.graded is true',
        join: `\nleft join lateral ${gradeOf(gradeSql)} gr on true`,
      };
}
