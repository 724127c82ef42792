select attempt, answer, steps, answered_at
from echo_answers
where run_id = $1 and task_id = $2
order by attempt

-- parameters:
-- $1 = "run-1"
-- $2 = "echo-000"
