select coalesce(json_agg(json_build_array(t.task_id, t.seq, t.domain, t.status, t.final_api_status, t.attempts, t.total_steps,
                                          t.reward, t.success, t.duration_ms, t.cost_usd, left(t.error, 300),
                                          left(t.instruction, 300), t.epoch) order by t.seq), '[]')::text as rows
from tasks t
where t.run_id = $1

-- parameters:
-- $1 = "run-1"
