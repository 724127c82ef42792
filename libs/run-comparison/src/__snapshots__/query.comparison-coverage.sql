select r.id as run_id, r.name, r.benchmark, r.epochs,
       count(distinct t.base_task_id)::int as tasks,
       count(*) filter (where t.status in ('queued', 'running'))::int as unsettled,
       count(distinct t.base_task_id) filter (where not exists (
         select 1 from tasks o
         where o.run_id = case when r.id = $1 then $2 else $1 end
           and o.base_task_id = t.base_task_id))::int as without_partner
from runs r
left join tasks t on t.run_id = r.id
where r.id in ($1, $2)
group by r.id
order by r.id = $2

-- parameters:
-- $1 = "run-a"
-- $2 = "run-b"
