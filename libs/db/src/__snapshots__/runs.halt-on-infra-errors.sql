with run as (
  select id, (limits->>'max_infra_error_rate')::float8 as rate,
         coalesce((limits->>'infra_window')::int, 20) as window_size
  from runs
  where id = $1 and halt is null and status in ('queued', 'running')
    and limits ? 'max_infra_error_rate'
),
recent as (
  select a.status, a.error_class from tasks t
  join attempts a on a.run_id = t.run_id and a.task_id = t.task_id and a.attempt = t.attempts
  where t.run_id = (select id from run) and a.status <> 'running'
    and a.error is distinct from 'handed back at worker shutdown'
  order by a.finished_at desc
  limit (select window_size from run)
),
counted as (
  select count(*) filter (where status = 'error' and error_class = 'infra')::int as infra,
         count(*)::int as seen
  from recent
)
update runs r
set halt = 'infra', halted_at = now(),
    halt_reason = format('paused: %s of the last %s settled tasks failed on infrastructure (more than %s%% of a window of %s); `scheduler resume %s` takes it up again',
                         c.infra, c.seen, round((run.rate * 100)::numeric, 1), run.window_size, r.id)
from run, counted c
where r.id = run.id and r.halt is null and c.infra > run.rate * run.window_size
returning c.infra, run.window_size, run.rate, r.halt_reason as reason

-- parameters:
-- $1 = "run-1"
