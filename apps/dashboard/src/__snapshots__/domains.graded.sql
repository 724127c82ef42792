select d.domain, d.total, d.succeeded, d.failed, d.cancelled, d.errors, d.pending, d.success_rate, d.avg_reward, d.avg_steps, d.cost_usd,
       g.graded, g.scored, g.graded_success_rate, g.mean_score
from domain_summary d
left join lateral (
  select count(*)::int as graded, count(gr.score)::int as scored,
       round(avg((gr.score = 1)::int) filter (where gr.score is not null and t.success is not null)::numeric, 4)::float8 as graded_success_rate,
       round(avg(gr.score)::numeric, 4)::float8 as mean_score
  from tasks t
  cross join lateral (select true as graded, x.score from (
  select t.reward as score where t.reward is not null
) x) gr
  where t.run_id = d.run_id and t.domain = d.domain
) g on true
where d.run_id = $1
order by d.domain

-- parameters:
-- $1 = "run-1"
