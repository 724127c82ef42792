select a.attempt, a.status,
       round(extract(epoch from a.finished_at - a.started_at) * 1000)::float8 as total_ms,
       case when a.finished_at is not null then jsonb_build_object(
            'agent', greatest(extract(epoch from coalesce(last.at, a.finished_at) - a.started_at), 0) * 1000,
            'finish', greatest(extract(epoch from a.finished_at - coalesce(last.at, a.finished_at)), 0) * 1000) end as phases
from attempts a
left join lateral (
  select s.at from steps s
  where s.run_id = a.run_id and s.task_id = a.task_id and s.attempt = a.attempt
  order by s.step desc limit 1
) last on true
where a.run_id = $1 and a.task_id = $2
order by a.attempt

-- parameters:
-- $1 = "run-1"
-- $2 = "task-1"
