with input as (
  select * from unnest(
    $1::text[], $2::text[], $3::int[],
    $4::text[], $5::timestamptz[],
    $6::text[], $7::text[],
    $8::text[], $9::text[],
    $10::text[], $11::int[],
    $12::float8[], $13::bool[],
    $14::int[], $15::int[],
    $16::int[], $17::float8[],
    $18::text[], $19::jsonb[]
  ) with ordinality as i(run_id, task_id, attempt, worker_id, at, status, error_class, error, external_id, final_api_status,
                         total_steps, reward, success, duration_ms, tokens_in, tokens_out, cost_usd, answer, result, n)
),
lost as (
  select i.*, i.at - make_interval(secs => i.duration_ms::float8 / 1000) as started_at from input i
  join tasks t on t.run_id = i.run_id and t.task_id = i.task_id
  where t.status in ('queued', 'running')
    and not exists (
      select 1 from attempts a
      where a.run_id = i.run_id and a.task_id = i.task_id and a.attempt = i.attempt and a.status <> 'running')
  for update of t
),
superseded as (
  update attempts a
  set status = 'error', error_class = 'infra', finished_at = now(),
      error = 'outcome lost in a database failover: the task ran again until the outcome of attempt ' || lost.attempt || ' was restored'
  from lost
  where a.run_id = lost.run_id and a.task_id = lost.task_id and a.attempt <> lost.attempt and a.status = 'running'
  returning a.run_id
),
attempt_rows as (
  insert into attempts (run_id, task_id, attempt, job_attempt, worker_id, status, error_class, error, external_id,
                        started_at, finished_at, tokens_in, tokens_out, cost_usd)
  select run_id, task_id, attempt, 1, worker_id, status, error_class,
         case when error is null then $20 else error || ' (' || $21 || ')' end,
         external_id, started_at, at, tokens_in, tokens_out, cost_usd
  from lost
  on conflict (run_id, task_id, attempt) do update
  set status = excluded.status, error_class = excluded.error_class, error = excluded.error, worker_id = excluded.worker_id,
      external_id = coalesce(excluded.external_id, attempts.external_id), finished_at = excluded.finished_at,
      tokens_in = greatest(excluded.tokens_in, attempts.tokens_in), tokens_out = greatest(excluded.tokens_out, attempts.tokens_out),
      cost_usd = excluded.cost_usd
  returning run_id
),
-- The task's spend: this attempt's, plus what its other attempts recorded.
earlier as (
  select l.n, sum(o.tokens_in) as tokens_in, sum(o.tokens_out) as tokens_out,
         sum(o.cost_usd) as cost_usd, bool_or(o.cost_usd is null) as cost_unknown
  from lost l
  join attempts o on o.run_id = l.run_id and o.task_id = l.task_id and o.attempt <> l.attempt
  group by l.n
),
task_rows as (
  update tasks t
  set status = l.status, final_api_status = l.final_api_status, total_steps = l.total_steps, reward = l.reward,
      success = l.success, duration_ms = l.duration_ms, started_at = l.started_at, finished_at = l.at,
      tokens_in = l.tokens_in + coalesce(e.tokens_in, 0), tokens_out = l.tokens_out + coalesce(e.tokens_out, 0),
      cost_usd = case when coalesce(e.cost_unknown, false) then null else l.cost_usd + coalesce(e.cost_usd, 0) end,
      error_class = l.error_class, answer = l.answer, result = l.result, error = l.error,
      attempts = greatest(t.attempts, l.attempt), worker_id = l.worker_id, external_id = coalesce(l.external_id, t.external_id)
  from lost l
  left join earlier e on e.n = l.n
  where t.run_id = l.run_id and t.task_id = l.task_id
  returning t.run_id, t.task_id
)
select i.n::int as n, exists (select 1 from task_rows r where r.run_id = i.run_id and r.task_id = i.task_id) as restored
from input i order by i.n

-- parameters:
-- $1 = ["run-1"]
-- $2 = ["fails"]
-- $3 = [2]
-- $4 = ["worker-1"]
-- $5 = ["1970-01-01T00:00:00.000Z"]
-- $6 = ["failed"]
-- $7 = [null]
-- $8 = [null]
-- $9 = [null]
-- $10 = ["NEEDS_HELP"]
-- $11 = [5]
-- $12 = [null]
-- $13 = [false]
-- $14 = [2000]
-- $15 = [0]
-- $16 = [0]
-- $17 = [null]
-- $18 = [null]
-- $19 = [null]
-- $20 = "outcome lost in a database failover: restored from the worker's outcome ledger (steps written after the failover point are gone)"
-- $21 = "outcome lost in a database failover: restored from the worker's outcome ledger (steps written after the failover point are gone)"
