select t.run_id, t.task_id, t.seq, t.domain, t.instruction, t.spec, t.status, t.final_api_status, t.attempts,
       t.total_steps, t.reward, t.success, t.duration_ms, t.tokens_in, t.tokens_out, t.cost_usd,
       t.answer, t.result, t.error, t.worker_id, t.started_at, t.finished_at, r.benchmark, r.name as run_name
from tasks t
join runs r on r.id = t.run_id
where t.run_id = $1 and t.task_id = $2

-- parameters:
-- $1 = "run-1"
-- $2 = "task-1"
