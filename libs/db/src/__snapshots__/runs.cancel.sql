-- begin

update "runs" set "status" = $1, "finished_at" = $2 where "id" = $3 and "status" in ($4, $5) returning "status"

-- parameters:
-- $1 = "cancelled"
-- $2 = <Date>
-- $3 = "run-1"
-- $4 = "queued"
-- $5 = "running"

select "status" from "runs" where "id" = $1

-- parameters:
-- $1 = "run-1"

-- commit
