with per_domain as (
  select t.domain,
         count(*)::int as total,
         count(*) filter (where t.status in ('success', 'failed', 'cancelled', 'error'))::int as settled,
         count(*) filter (where t.status in ('success', 'failed', 'cancelled', 'error') and t.attempts > 0)::int as ran,
         count(*) filter (where t.status in ('queued', 'running'))::int as open,
         coalesce(bool_or(t.cost_usd is null and t.status in ('success', 'failed', 'cancelled', 'error') and t.attempts > 0), false) as unpriced,
         coalesce(sum(t.cost_usd) filter (where t.status in ('success', 'failed', 'cancelled', 'error')), 0)::float8 as spent
  from tasks t
  where t.run_id = $1
  group by t.domain
), whole as (
  select sum(total)::int as total, sum(settled)::int as settled, sum(ran)::int as ran,
         bool_or(unpriced) as unpriced, sum(spent)::float8 as spent
  from per_domain
)
select coalesce(w.total, 0) as total_tasks, coalesce(w.settled, 0) as settled_tasks,
       case when w.unpriced then null else coalesce(w.spent, 0) end as spent_usd,
       case when w.unpriced or coalesce(w.settled, 0) = 0 then null
            else w.spent / w.settled * w.total end as projected_simple_usd,
       case when w.unpriced or coalesce(w.ran, 0) = 0 then null
            else w.spent + (select sum(d.open * case when d.ran > 0 then d.spent / d.ran else w.spent / w.ran end)
                            from per_domain d) end as projected_usd
from whole w

-- parameters:
-- $1 = "run-1"
