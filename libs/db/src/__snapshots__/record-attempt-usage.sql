update "attempts" set "tokens_in" = $1, "tokens_out" = $2, "cost_usd" = $3 where "run_id" = $4 and "task_id" = $5 and "attempt" = $6 and "tokens_in" + "tokens_out" <= $7

-- parameters:
-- $1 = 1000
-- $2 = 100
-- $3 = 0.0035
-- $4 = "run-1"
-- $5 = "a"
-- $6 = 1
-- $7 = 1100
