-- begin

update "attempts" set "external_id" = $1 where "run_id" = $2 and "task_id" = $3 and "attempt" = $4

-- parameters:
-- $1 = "bytebot-1"
-- $2 = "run-1"
-- $3 = "a"
-- $4 = 1

update "tasks" set "external_id" = $1 where "run_id" = $2 and "task_id" = $3

-- parameters:
-- $1 = "bytebot-1"
-- $2 = "run-1"
-- $3 = "a"

-- commit
