select *, to_char(at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') as "at_iso" from "steps" where "run_id" = $1 and (("task_id" = $2 and "attempt" = $3) or ("task_id" = $4 and "attempt" = $5)) order by "task_id", "step"

-- parameters:
-- $1 = "run-1"
-- $2 = "a"
-- $3 = 1
-- $4 = "b"
-- $5 = 2
