select attempt, step, at, action, text, observation, reward, screenshot_uri is not null as has_screenshot,
       tokens_in, tokens_out, latency_ms
from steps
where run_id = $1 and task_id = $2
order by attempt, step

-- parameters:
-- $1 = "run-1"
-- $2 = "task-1"
