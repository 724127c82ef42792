/**
 * SQL over the grade views of graded OSWorld runs, for README.md beside the fleet's example
 * queries; each is run by a test against real rows. `:'run'` is a psql variable holding a run id.
 */
export const GRADED_EXAMPLE_QUERIES = [
  {
    title: 'Agent-reported against graded success',
    sql: `
select name, tasks, scored, no_score, claimed_success_rate, graded_success_rate, mean_score,
       claimed_and_passed, claimed_but_failed, unclaimed_but_passed, unclaimed_and_failed
from osworld_run_grading
where run_id = :'run';`,
  },
  {
    title: 'False claims: tasks the agent called done that the grade failed',
    sql: `
select task_id, domain, final_api_status, score, fidelity, metric_version
from osworld_task_grades
where run_id = :'run' and claimed_success and score < 1
order by domain, task_id;`,
  },
  {
    title: 'Graded score by domain',
    sql: `
select domain, tasks, scored, mean_score, graded_success_rate, claimed_success_rate
from osworld_domain_grading
where run_id = :'run'
order by mean_score desc nulls last, domain;`,
  },
  {
    title: 'Graded tasks without a score, and why',
    sql: `
select task_id, domain, fidelity, no_score_cause, reason
from osworld_task_grades
where run_id = :'run' and grade_no is not null and score is null
order by task_id;`,
  },
  {
    title: 'Scores a regrade changed',
    sql: `
select g.task_id, o.metric_version as from_version, o.score as from_score,
       g.metric_version as to_version, g.score as to_score
from osworld_grades g
join osworld_grades o on o.run_id = g.run_id and o.task_id = g.task_id
  and o.attempt = g.attempt and o.grade_no = g.regraded_from
where g.run_id = :'run' and g.score is distinct from o.score
order by g.task_id, g.grade_no;`,
  },
] as const;
