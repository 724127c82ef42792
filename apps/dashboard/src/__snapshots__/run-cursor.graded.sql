select count(*) filter (where t.status = 'running')::int as running,
       count(*) filter (where t.status in ('success', 'failed', 'cancelled', 'error'))::int as settled,
       max(t.started_at) as last_start, max(t.finished_at) as last_finish,
       (select r.status || ':' || (r.summary is not null)::text || ':' || coalesce(r.halt, '') from runs r where r.id = $1) as run_state,
       (select md5(string_agg(t.task_id || '=' || coalesce(gr.score::text, 'none'), ',' order by t.task_id))
        from tasks t
        cross join lateral (
          select t.reward as score where t.reward is not null
        ) gr
        where t.run_id = $1) as grades
from tasks t
where t.run_id = $1

-- parameters:
-- $1 = "run-1"
