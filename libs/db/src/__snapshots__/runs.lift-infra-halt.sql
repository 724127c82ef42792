update "runs" set "halt" = $1, "halt_reason" = $2, "halted_at" = $3 where "id" = $4 and "halt" = $5

-- parameters:
-- $1 = null
-- $2 = null
-- $3 = null
-- $4 = "run-1"
-- $5 = "infra"
