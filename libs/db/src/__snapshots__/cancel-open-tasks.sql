with cancelled_tasks as (
  update tasks set status = 'cancelled', error = 'run cancelled', finished_at = now(),
    total_steps = (select count(*) from steps s where s.run_id = tasks.run_id and s.task_id = tasks.task_id and s.attempt = tasks.attempts)
  where run_id = $1 and status in ('queued', 'running')
  returning task_id
),
closed as (
  update attempts set status = 'cancelled', error = 'run cancelled', finished_at = now()
  where run_id = $2 and status = 'running'
  returning attempt
)
select (select count(*) from cancelled_tasks)::int as n, (select count(*) from closed)::int as attempts

-- parameters:
-- $1 = "run-1"
-- $2 = "run-1"
