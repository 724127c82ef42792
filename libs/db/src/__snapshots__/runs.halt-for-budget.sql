with fence as (
  update runs set halt = 'budget', halt_reason = $1, halted_at = now()
  where id = $2 and halt is distinct from 'budget' and status in ('queued', 'running')
  returning id
),
between_attempts as (
  select a.task_id, a.attempt from attempts a
  join tasks t on t.run_id = a.run_id and t.task_id = a.task_id and t.attempts = a.attempt
  where a.run_id = $3 and t.status = 'running' and a.status <> 'running'
),
ended as (
  update tasks t
  set status = 'error', error_class = 'budget', success = false, finished_at = now(),
      error = 'budget: ' || $4 || case when t.status = 'queued' then ' (the task never ran)' else ' (stopped between attempts)' end
  where t.run_id = $5
    and (t.status = 'queued'
      or (t.status = 'running' and exists (
        select 1 from between_attempts b where b.task_id = t.task_id and b.attempt = t.attempts)))
  returning t.task_id
)
select (select count(*) from fence)::int as fenced, (select count(*) from ended)::int as ended

-- parameters:
-- $1 = "the run spend limit is reached"
-- $2 = "run-1"
-- $3 = "run-1"
-- $4 = "the run spend limit is reached"
-- $5 = "run-1"
