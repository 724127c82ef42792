with per_task as (
  select t.run_id, t.base_task_id, min(t.domain) as domain, min(t.seq) as seq,
         string_agg(t.status, ',' order by t.epoch) as status,
         count(*)::int as epochs,
         avg(coalesce(t.success, false)::int)::float8 as pass_rate,
         avg(coalesce(t.reward, 0))::float8 as reward
  from tasks t
  where t.run_id in ($1, $2) and t.status in ('success', 'failed', 'cancelled', 'error')
  group by t.run_id, t.base_task_id
)
select a.base_task_id as task_id, a.domain,
       a.status as status_a, b.status as status_b,
       a.pass_rate > 0.5 as success_a, b.pass_rate > 0.5 as success_b,
       a.reward as reward_a, b.reward as reward_b,
       a.epochs as epochs_a, b.epochs as epochs_b,
       a.pass_rate as pass_rate_a, b.pass_rate as pass_rate_b
from per_task a
join per_task b on b.run_id = $2 and b.base_task_id = a.base_task_id
where a.run_id = $1
order by a.seq, a.base_task_id

-- parameters:
-- $1 = "run-a"
-- $2 = "run-b"
