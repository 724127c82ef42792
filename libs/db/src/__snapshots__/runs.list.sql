select * from "run_summary" order by "created_at" desc limit $1

-- parameters:
-- $1 = 20
