select * from "llm_calls" where "run_id" = $1 order by "task_id", "attempt", "call_no"

-- parameters:
-- $1 = "run-1"
