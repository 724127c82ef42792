select * from "steps" where "run_id" = $1 and "task_id" = $2 and "attempt" = $3 order by "attempt", "step"

-- parameters:
-- $1 = "run-1"
-- $2 = "a"
-- $3 = 1
