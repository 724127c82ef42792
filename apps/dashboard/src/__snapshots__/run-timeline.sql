with run_attempts as (
  select started_at, finished_at, status from attempts where run_id = $1
), span as (
  select min(started_at) as t0,
         greatest(max(finished_at), max(started_at), min(started_at) + interval '1 millisecond') as t1
  from run_attempts
), frame as (
  select t0, extract(epoch from t1 - t0)::float8 / $2::int as width from span where t0 is not null
), events as (
  select started_at as at, 1 as delta, null::text as status from run_attempts
  union all
  select finished_at, -1, status from run_attempts where finished_at is not null
), running as (
  select at, delta, status, sum(delta) over (order by at, delta rows unbounded preceding) as running
  from events
), bucketed as (
  select least(floor(extract(epoch from r.at - f.t0) / f.width), $2::int - 1)::int as bucket, r.*
  from running r, frame f
), per_bucket as (
  select s.bucket, f.t0 + make_interval(secs => s.bucket * f.width) as starts_at, f.width as bucket_seconds,
         count(*) filter (where b.delta = 1)::int as started,
         count(*) filter (where b.status = 'success')::int as succeeded,
         count(*) filter (where b.status = 'failed')::int as failed,
         count(*) filter (where b.status = 'error')::int as errors,
         count(*) filter (where b.status = 'cancelled')::int as cancelled,
         max(b.running) as peak
  from frame f
  cross join generate_series(0, $2::int - 1) as s(bucket)
  left join bucketed b on b.bucket = s.bucket
  group by s.bucket, f.t0, f.width
)
select bucket, starts_at, bucket_seconds, started, succeeded, failed, errors, cancelled,
       greatest(peak, coalesce(sum(started - succeeded - failed - errors - cancelled)
                  over (order by bucket rows between unbounded preceding and 1 preceding), 0))::int as peak_running
from per_bucket
order by bucket

-- parameters:
-- $1 = "run-1"
-- $2 = 60
