select coalesce(json_agg(json_build_array(t.task_id, t.seq, t.domain, t.status, t.final_api_status, t.attempts, t.total_steps,
                                          t.reward, t.success, t.duration_ms, t.cost_usd, left(t.error, 300),
                                          left(t.instruction, 300), t.epoch, gr.score, gr.graded is true) order by t.seq), '[]')::text as rows
from tasks t
left join lateral (select true as graded, x.score from (
  select t.reward as score where t.reward is not null
) x) gr on true
where t.run_id = $1 and greatest(t.started_at, t.finished_at) >= $2::timestamptz

-- parameters:
-- $1 = "run-1"
-- $2 = "2026-12-08T00:00:00.000Z"
