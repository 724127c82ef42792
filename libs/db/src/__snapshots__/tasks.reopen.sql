with chosen as (
  select t.task_id, t.status, t.seq from tasks t
  where t.run_id = $1
    and (t.status = any($2::text[])
      or ($3 and t.status = 'error' and t.error_class is distinct from 'budget' and not exists (
        select 1 from attempts a
        where a.run_id = t.run_id and a.task_id = t.task_id and a.attempt = t.attempts and a.error_class in ('agent', 'permanent'))))
  for update
),
reopened as (
  update tasks set status = 'queued', finished_at = null, error = null, error_class = null
  from chosen
  where tasks.run_id = $4 and tasks.task_id = chosen.task_id and chosen.status not in ('queued', 'running')
  returning tasks.task_id
)
select chosen.task_id, chosen.status as was from chosen order by chosen.seq

-- parameters:
-- $1 = "run-1"
-- $2 = ["queued","running"]
-- $3 = true
-- $4 = "run-1"
