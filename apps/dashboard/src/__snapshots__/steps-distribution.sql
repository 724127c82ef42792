select total_steps as steps, count(*)::int as tasks,
       count(*) filter (where status = 'success')::int as succeeded
from tasks
where run_id = $1 and status in ('success', 'failed', 'cancelled', 'error')
group by total_steps
order by total_steps

-- parameters:
-- $1 = "run-1"
