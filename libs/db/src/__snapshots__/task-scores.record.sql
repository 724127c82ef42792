with "rescored" as (update "tasks" set "success" = $1, "reward" = $2, "status" = $3 where "run_id" = $4 and "task_id" = $5 and "attempts" = $6 and "status" in ($7, $8) and success is not distinct from $9::boolean and reward is not distinct from $10::float8 returning "run_id", "task_id") insert into "task_scores" ("run_id", "task_id", "attempt", "scorer_version", "success_before", "reward_before", "success", "reward", "details") select "rescored"."run_id", "rescored"."task_id", $11::int as "attempt", $12::text as "scorer_version", $13::boolean as "success_before", $14::float8 as "reward_before", $15::boolean as "success", $16::float8 as "reward", $17::jsonb as "details" from "rescored" returning "id"

-- parameters:
-- $1 = false
-- $2 = 0.5
-- $3 = "failed"
-- $4 = "run-1"
-- $5 = "a"
-- $6 = 1
-- $7 = "success"
-- $8 = "failed"
-- $9 = null
-- $10 = null
-- $11 = 1
-- $12 = "v1"
-- $13 = null
-- $14 = null
-- $15 = false
-- $16 = 0.5
-- $17 = "{\"why\":\"example\"}"
