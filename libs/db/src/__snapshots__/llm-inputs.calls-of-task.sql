select * from "llm_calls" where "run_id" = $1 and "task_id" = $2 and "attempt" = $3 order by "attempt", "call_no"

-- parameters:
-- $1 = "run-1"
-- $2 = "a"
-- $3 = 1
