with settled as (
  select duration_ms / 1000.0 as seconds, status
  from tasks
  where run_id = $1 and duration_ms is not null and status in ('success', 'failed', 'cancelled', 'error')
), bounds as (
  select greatest(max(seconds), 0.001) as longest from settled
)
select least(floor(seconds / longest * 30), 29)::int as bin,
       (longest / 30)::float8 as bin_seconds,
       count(*)::int as tasks,
       count(*) filter (where status = 'success')::int as succeeded
from settled, bounds
group by bin, longest
order by bin

-- parameters:
-- $1 = "run-1"
