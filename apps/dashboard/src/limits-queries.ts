// The columns the runs list and a run's page read of its limits (issue 23): the fence workers
// obey (`runs.halt`), both scores and the counts behind them (`run_summary`), and the spend of the
// settled tasks against the run's limit and per-task limit (`runs.limits`), with the overshoot.
// Text spliced into those two queries over `run_summary s join runs r`, so that each one's Show
// SQL gives these numbers too.

const RUN_LIMIT = `(r.limits->>'max_cost_usd')::float8`;
const TASK_LIMIT = `(r.limits->>'max_task_cost_usd')::float8`;

/**
 * `unpriced`: a task that ran has no cost, or nothing was used yet and the enqueue found no price
 * for the run's model (`limits.model_price` null): what was priced decides, since the workers may
 * hold a price the enqueue had not. Its spend is unknown, never $0. The overshoot is null when the
 * spend is unknown or there is no limit, else what was spent past the limit (0 within it).
 */
export const LIMITS_COLUMNS = `s.success_rate_excluding_infra, s.infra_failed, s.budget_stopped, s.projected_cost_usd,
       r.halt, r.halt_reason, r.halted_at,
       ${RUN_LIMIT} as max_cost_usd, ${TASK_LIMIT} as max_task_cost_usd,
       (r.limits->>'max_infra_error_rate')::float8 as max_infra_error_rate, (r.limits->>'infra_window')::int as infra_window,
       (s.cost_usd is null or (s.tokens_in + s.tokens_out = 0 and coalesce(r.limits->'model_price' = 'null'::jsonb, false))) as unpriced,
       case when s.cost_usd is not null and ${RUN_LIMIT} is not null
            then greatest(s.cost_usd - ${RUN_LIMIT}, 0)::float8 end as over_limit_usd,
       tl.tasks_over_limit, tl.max_task_over_usd`;

/**
 * The tasks that spent past the per-task limit, and by how much the worst did. Read only for a
 * run with such a limit: for any other the lateral's filter is false at once.
 */
export const TASK_LIMIT_JOIN = `
left join lateral (
  select count(*) filter (where t.cost_usd > ${TASK_LIMIT})::int as tasks_over_limit,
         greatest(max(t.cost_usd) - ${TASK_LIMIT}, 0)::float8 as max_task_over_usd
  from tasks t
  where t.run_id = s.run_id and ${TASK_LIMIT} is not null
) tl on true`;
