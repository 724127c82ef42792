select "task_id", "status" from "tasks" where "run_id" = $1 and "status" in ($2, $3) order by "seq"

-- parameters:
-- $1 = "run-1"
-- $2 = "queued"
-- $3 = "running"
