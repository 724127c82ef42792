select screenshot_uri
from steps
where run_id = $1 and task_id = $2 and attempt = $3 and step = $4

-- parameters:
-- $1 = "run-1"
-- $2 = "task-1"
-- $3 = 1
-- $4 = 3
