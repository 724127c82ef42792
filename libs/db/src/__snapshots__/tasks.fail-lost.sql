with attempt_row as (
  update attempts set status = 'error', error_class = 'infra', error = $1, finished_at = now()
  where run_id = $2 and task_id = $3 and status = 'running'
  returning attempt
),
-- The task's spend is what its attempts recorded (a lost attempt's calls wrote theirs as they were made).
spend as (
  select sum(tokens_in) as tokens_in, sum(tokens_out) as tokens_out,
         case when bool_or(cost_usd is null) then null else sum(cost_usd) end as cost_usd
  from attempts where run_id = $4 and task_id = $5
),
task_row as (
  update tasks set status = 'error', error_class = 'infra', error = $6, finished_at = now(),
         tokens_in = coalesce(spend.tokens_in, 0), tokens_out = coalesce(spend.tokens_out, 0), cost_usd = spend.cost_usd
  from spend
  where run_id = $7 and task_id = $8 and status in ('queued', 'running')
  returning task_id
)
select exists (select 1 from task_row) as recorded, (select count(*) from attempt_row) as attempts_closed

-- parameters:
-- $1 = "lost"
-- $2 = "run-1"
-- $3 = "a"
-- $4 = "run-1"
-- $5 = "a"
-- $6 = "lost"
-- $7 = "run-1"
-- $8 = "a"
