update "runs" set "status" = $1, "finished_at" = $2 where "id" = $3 and "status" != $4

-- parameters:
-- $1 = "queued"
-- $2 = null
-- $3 = "run-1"
-- $4 = "queued"
