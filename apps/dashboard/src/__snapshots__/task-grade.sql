select gr.graded, gr.score
from tasks t
cross join lateral (select true as graded, x.score from (
  select t.reward as score where t.reward is not null
) x) gr
where t.run_id = $1 and t.task_id = $2

-- parameters:
-- $1 = "run-1"
-- $2 = "task-1"
