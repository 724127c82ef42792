/**
 * The SQL that README.md shows users; each is run by a test against real rows, and in psql.
 * `:'run'` and `:'other_run'` are psql variables holding run ids (`psql -v run=run-…`).
 */
export const EXAMPLE_QUERIES = [
  {
    title: 'Success rate by domain',
    sql: `
select domain, total, succeeded, success_rate, avg_reward, avg_steps
from domain_summary
where run_id = :'run'
order by success_rate desc nulls last, domain;`,
  },
  {
    title: 'Slowest tasks',
    sql: `
select task_id, domain, status, total_steps, duration_ms / 1000.0 as seconds
from tasks
where run_id = :'run' and duration_ms is not null
order by duration_ms desc
limit 10;`,
  },
  {
    title: 'Step distribution',
    sql: `
select total_steps as steps, count(*) as tasks, round(avg(reward)::numeric, 3) as avg_reward
from tasks
where run_id = :'run' and status in ('success', 'failed', 'cancelled')
group by total_steps
order by total_steps;`,
  },
  {
    title: 'Two runs compared task by task',
    sql: `
select a.task_id, a.domain, a.status as status_a, b.status as status_b, a.reward as reward_a, b.reward as reward_b
from tasks a
join tasks b on b.task_id = a.task_id and b.run_id = :'other_run'
where a.run_id = :'run' and (a.status is distinct from b.status or a.reward is distinct from b.reward)
order by a.task_id;`,
  },
  {
    title: 'Token cost per success',
    sql: `
select run_id, name, tokens_in, tokens_out, cost_usd,
       succeeded, case when succeeded > 0 then round((cost_usd / succeeded)::numeric, 6) end as cost_per_success_usd
from run_summary
where run_id = :'run';`,
  },
] as const;
