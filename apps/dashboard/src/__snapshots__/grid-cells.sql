with chosen as (
  select id, ord::int from jsonb_array_elements_text($1::jsonb) with ordinality as c(id, ord)
), cells as (
  select t.base_task_id as task_id, c.ord,
         json_agg(json_build_array(t.epoch, t.status, t.reward,
                                   case when t.task_id <> t.base_task_id then t.task_id end)
                  order by t.epoch) as epochs,
         avg((t.status = 'success')::int)
           filter (where t.status in ('success', 'failed', 'cancelled', 'error')) as pass_rate,
         bool_or(t.status = 'failed') as failed,
         bool_or(t.status = 'error') as infra,
         bool_or($2 = '' or strpos(lower(t.base_task_id || ' ' || t.instruction), lower($2)) > 0) as named
  from chosen c
  join tasks t on t.run_id = c.id
  group by 1, 2
), per_task as (
  select task_id, json_object_agg(ord, epochs) as cells,
         count(distinct pass_rate) > 1 as differ, bool_or(failed) as failed,
         bool_or(infra) as infra, bool_or(named) as named
  from cells group by task_id
)
select coalesce(json_agg(json_build_array(task_id, cells) order by task_id)
                  filter (where named and ($3 = 'all' or ($3 = 'differ' and differ)
                          or ($3 = 'failed' and failed) or ($3 = 'infra' and infra))),
                '[]')::text as rows,
       count(*)::int as total
from per_task

-- parameters:
-- $1 = "[\"run-a\",\"run-b\"]"
-- $2 = ""
-- $3 = "all"
