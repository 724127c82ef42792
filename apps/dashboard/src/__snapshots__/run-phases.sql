with attempt_phases as (
  select extract(epoch from a.finished_at - a.started_at) * 1000 as total_ms,
         jsonb_build_object(
            'agent', greatest(extract(epoch from coalesce(last.at, a.finished_at) - a.started_at), 0) * 1000,
            'finish', greatest(extract(epoch from a.finished_at - coalesce(last.at, a.finished_at)), 0) * 1000) as phases
  from tasks t
  join attempts a on a.run_id = t.run_id and a.task_id = t.task_id and a.attempt = t.attempts
  left join lateral (
    select s.at from steps s
    where s.run_id = a.run_id and s.task_id = a.task_id and s.attempt = a.attempt
    order by s.step desc limit 1
  ) last on true
  where t.run_id = $1 and a.finished_at is not null
), durations as (
  select p.key as phase, p.value::text::float8 as ms
  from attempt_phases, jsonb_each(phases) p
  where jsonb_typeof(p.value) = 'number'
  union all
  select 'total', total_ms from attempt_phases
)
select phase, count(*)::int as attempts, round(sum(ms))::float8 as total_ms,
       round(percentile_cont(0.5) within group (order by ms))::float8 as p50_ms,
       round(percentile_cont(0.95) within group (order by ms))::float8 as p95_ms,
       round(max(ms))::float8 as max_ms
from durations
group by phase

-- parameters:
-- $1 = "run-1"
