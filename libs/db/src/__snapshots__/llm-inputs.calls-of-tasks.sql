select * from "llm_calls" where "run_id" = $1 and "task_id" = any($2::text[]) order by "task_id", "attempt", "call_no"

-- parameters:
-- $1 = "run-1"
-- $2 = ["a","b"]
