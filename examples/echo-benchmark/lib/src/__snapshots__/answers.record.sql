insert into "echo_answers" ("run_id", "task_id", "attempt", "answer", "steps") values ($1, $2, $3, $4, $5) on conflict ("run_id", "task_id", "attempt") do nothing

-- parameters:
-- $1 = "run-1"
-- $2 = "echo-000"
-- $3 = 1
-- $4 = "say 0"
-- $5 = 1
