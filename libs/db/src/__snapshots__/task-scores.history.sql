select * from "task_scores" where "run_id" = $1 and "task_id" = $2 order by "id"

-- parameters:
-- $1 = "run-1"
-- $2 = "a"
