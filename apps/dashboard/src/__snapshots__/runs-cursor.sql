select coalesce(json_agg(json_build_array(run_id, tasks, running, settled, last_start, last_finish) order by run_id), '[]')::text as cursor
from (
  select t.run_id, count(*) as tasks,
         count(*) filter (where t.status = 'running') as running,
         count(*) filter (where t.status in ('success', 'failed', 'cancelled', 'error')) as settled,
         max(t.started_at) as last_start, max(t.finished_at) as last_finish
  from tasks t
  where t.run_id in (select jsonb_array_elements_text($1::jsonb))
  group by t.run_id
) per_run

-- parameters:
-- $1 = "[\"run-a\",\"run-b\"]"
