select attempt, job_attempt, worker_id, external_id, status, error_class, error, started_at, finished_at
from attempts
where run_id = $1 and task_id = $2
order by attempt

-- parameters:
-- $1 = "run-1"
-- $2 = "task-1"
