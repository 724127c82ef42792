select count(*)::int as graded, count(gr.score)::int as scored,
       round(avg((gr.score = 1)::int) filter (where gr.score is not null and t.success is not null)::numeric, 4)::float8 as graded_success_rate,
       round(avg(gr.score)::numeric, 4)::float8 as mean_score
from tasks t
cross join lateral (select true as graded, x.score from (
  select t.reward as score where t.reward is not null
) x) gr
where t.run_id = $1

-- parameters:
-- $1 = "run-1"
