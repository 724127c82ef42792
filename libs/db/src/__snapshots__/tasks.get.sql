select * from "tasks" where "run_id" = $1 and "task_id" = $2

-- parameters:
-- $1 = "run-1"
-- $2 = "a"
