select * from "run_summary" where "run_id" = $1

-- parameters:
-- $1 = "run-1"
