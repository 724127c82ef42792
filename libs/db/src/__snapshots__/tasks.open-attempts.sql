/* prepared */ 
with input as (
  select * from unnest($1::text[], $2::text[], $3::text[], $4::int[])
    with ordinality as i(run_id, task_id, worker_id, job_attempt, n)
),
-- A run behind a fence (its spend limit reached, or paused on infra errors) opens no attempt.
task as (
  select t.run_id, t.task_id, t.external_id from tasks t
  join input i on t.run_id = i.run_id and t.task_id = i.task_id
  join runs r on r.id = t.run_id
  where t.status in ('queued', 'running') and r.halt is null
  for update of t
),
previous as (
  select i.run_id, i.task_id, p.attempt, p.external_id from input i
  cross join lateral (
    select a.attempt, a.external_id from attempts a
    where a.run_id = i.run_id and a.task_id = i.task_id
    order by a.attempt desc limit 1
  ) p
),
closed as (
  update attempts a
  set status = 'error', error_class = 'infra', error = 'worker lost: the job stalled and was redelivered', finished_at = now()
  from task
  where a.run_id = task.run_id and a.task_id = task.task_id and a.status = 'running'
  returning a.attempt
),
opened as (
  insert into attempts (run_id, task_id, attempt, job_attempt, worker_id, status)
  select task.run_id, task.task_id, coalesce(previous.attempt, 0) + 1, i.job_attempt, i.worker_id, 'running'
  from task
  join input i on i.run_id = task.run_id and i.task_id = task.task_id
  left join previous on previous.run_id = task.run_id and previous.task_id = task.task_id
  returning run_id, task_id, attempt, worker_id
),
run_started as (
  update runs set status = 'running', started_at = coalesce(started_at, now())
  where id in (select run_id from opened) and status = 'queued'
  returning id
),
updated as (
  update tasks t
  set status = 'running', attempts = opened.attempt, worker_id = opened.worker_id, started_at = coalesce(t.started_at, now())
  from opened
  where t.run_id = opened.run_id and t.task_id = opened.task_id
  returning t.*
)
select i.n::int as n, updated.*, coalesce(previous.external_id, task.external_id) as previous_external_id
from input i
join updated on updated.run_id = i.run_id and updated.task_id = i.task_id
left join previous on previous.run_id = i.run_id and previous.task_id = i.task_id
left join task on task.run_id = i.run_id and task.task_id = i.task_id

-- parameters:
-- $1 = ["run-1"]
-- $2 = ["a"]
-- $3 = ["worker-1"]
-- $4 = [1]
