select t.task_id, gr.score
from tasks t
cross join lateral (select true as graded, x.score from (
  select t.reward as score where t.reward is not null
) x) gr
where t.run_id = $1
order by t.seq

-- parameters:
-- $1 = "run-1"
