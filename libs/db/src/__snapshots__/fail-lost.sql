with attempt_row as (
  update attempts set status = 'error', error_class = 'infra', error = $1, finished_at = now()
  where run_id = $2 and task_id = $3 and status = 'running'
  returning attempt
),
task_row as (
  update tasks set status = 'error', error_class = 'infra', error = $4, finished_at = now()
  where run_id = $5 and task_id = $6 and status in ('queued', 'running')
  returning task_id
)
select exists (select 1 from task_row) as recorded, (select count(*) from attempt_row) as attempts_closed

-- parameters:
-- $1 = "lost: job stalled more than allowable limit"
-- $2 = "run-1"
-- $3 = "a"
-- $4 = "lost: job stalled more than allowable limit"
-- $5 = "run-1"
-- $6 = "a"
