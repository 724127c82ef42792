update "attempts" set "status" = $1, "error_class" = $2, "error" = $3, "finished_at" = $4 where "run_id" = $5 and "task_id" = $6 and "attempt" = $7 and ("status" = $8 or ("status" = $9 and "error_class" = $10 and "error" = $11))

-- parameters:
-- $1 = "error"
-- $2 = "infra"
-- $3 = "handed back"
-- $4 = <Date>
-- $5 = "run-1"
-- $6 = "a"
-- $7 = 1
-- $8 = "running"
-- $9 = "error"
-- $10 = "infra"
-- $11 = "worker lost: the job stalled and was redelivered"
