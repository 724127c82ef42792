select * from "attempts" where "run_id" = $1 and "task_id" in ($2, $3) order by "task_id", "attempt"

-- parameters:
-- $1 = "run-1"
-- $2 = "a"
-- $3 = "b"
