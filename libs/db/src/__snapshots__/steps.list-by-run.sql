select * from "steps" where "run_id" = $1 order by "task_id", "attempt", "step"

-- parameters:
-- $1 = "run-1"
