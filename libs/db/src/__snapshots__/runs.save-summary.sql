update "runs" set "summary" = $1, "finished_at" = $2, "status" = case when status = 'cancelled' or $3 then status else 'finished' end where "id" = $4

-- parameters:
-- $1 = "{\"succeeded\":1}"
-- $2 = <Date>
-- $3 = false
-- $4 = "run-1"
