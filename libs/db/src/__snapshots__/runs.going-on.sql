select r.id, r.benchmark, r.halt, count(t.task_id) filter (where t.status in ('queued', 'running'))::int as open
from runs r left join tasks t on t.run_id = r.id
where r.status in ('queued', 'running') and r.created_at < now() - make_interval(secs => $1::float8 / 1000)
group by r.id
order by r.created_at

-- parameters:
-- $1 = 30000
