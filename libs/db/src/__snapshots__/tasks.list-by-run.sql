select * from "tasks" where "run_id" = $1 order by "seq"

-- parameters:
-- $1 = "run-1"
