select d.domain, d.total, d.succeeded, d.failed, d.cancelled, d.errors, d.pending, d.success_rate, d.avg_reward, d.avg_steps, d.cost_usd
from domain_summary d
where d.run_id = $1
order by d.domain

-- parameters:
-- $1 = "run-1"
