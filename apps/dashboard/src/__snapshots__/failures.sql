select t.status, coalesce(t.error_class, a.error_class, case when t.status = 'error' then 'infra' else 'agent' end) as error_class,
       t.final_api_status, coalesce(t.result->>'stop_reason', '') as stop_reason,
       null::text as reason,
       coalesce(left(t.error, 300), '') as message,
       count(*)::int as tasks,
       (array_agg(t.task_id order by t.seq))[1:5] as examples
from tasks t
left join attempts a on a.run_id = t.run_id and a.task_id = t.task_id and a.attempt = t.attempts
where t.run_id = $1 and t.status in ('failed', 'cancelled', 'error')
group by 1, 2, 3, 4, 5, 6
order by (t.status = 'error') desc, count(*) desc, 5, 6

-- parameters:
-- $1 = "run-1"
