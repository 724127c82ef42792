select s.run_id, s.name, s.benchmark, s.run_status, r.model, r.agent,
       s.total, s.queued, s.running, s.succeeded, s.failed, s.cancelled, s.errors, s.never_started,
       s.success_rate, s.avg_reward, s.cost_usd,
       s.created_at, r.started_at, r.finished_at,
       r.summary is not null and (r.summary->>'pending')::int = 0 as summarised,
       s.success_rate_excluding_infra, s.infra_failed, s.budget_stopped, s.projected_cost_usd,
       r.halt, r.halt_reason, r.halted_at,
       (r.limits->>'max_cost_usd')::float8 as max_cost_usd, (r.limits->>'max_task_cost_usd')::float8 as max_task_cost_usd,
       (r.limits->>'max_infra_error_rate')::float8 as max_infra_error_rate, (r.limits->>'infra_window')::int as infra_window,
       (s.cost_usd is null or (s.tokens_in + s.tokens_out = 0 and coalesce(r.limits->'model_price' = 'null'::jsonb, false))) as unpriced,
       case when s.cost_usd is not null and (r.limits->>'max_cost_usd')::float8 is not null
            then greatest(s.cost_usd - (r.limits->>'max_cost_usd')::float8, 0)::float8 end as over_limit_usd,
       tl.tasks_over_limit, tl.max_task_over_usd,
       null::int as graded, null::int as scored, null::float8 as graded_success_rate, null::float8 as mean_score
from run_summary s
join runs r on r.id = s.run_id
left join lateral (
  select count(*) filter (where t.cost_usd > (r.limits->>'max_task_cost_usd')::float8)::int as tasks_over_limit,
         greatest(max(t.cost_usd) - (r.limits->>'max_task_cost_usd')::float8, 0)::float8 as max_task_over_usd
  from tasks t
  where t.run_id = s.run_id and (r.limits->>'max_task_cost_usd')::float8 is not null
) tl on true
order by s.created_at desc

-- parameters:
