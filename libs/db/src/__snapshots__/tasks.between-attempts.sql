select "t"."task_id", "a"."attempt" as "failed_attempt", "a"."error_class", "a"."error", "a"."finished_at" from "tasks" as "t" inner join "attempts" as "a" on "a"."run_id" = "t"."run_id" and "a"."task_id" = "t"."task_id" and "a"."attempt" = "t"."attempts" where "t"."run_id" = $1 and "t"."status" = $2 and "a"."status" <> $3 order by "t"."seq"

-- parameters:
-- $1 = "run-1"
-- $2 = "running"
-- $3 = "running"
