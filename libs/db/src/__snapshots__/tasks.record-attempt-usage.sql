update "attempts" set "tokens_in" = $1, "tokens_out" = $2, "cost_usd" = $3 where "run_id" = $4 and "task_id" = $5 and "attempt" = $6 and "tokens_in" + "tokens_out" <= $7

-- parameters:
-- $1 = 10
-- $2 = 1
-- $3 = null
-- $4 = "run-1"
-- $5 = "a"
-- $6 = 1
-- $7 = 11
