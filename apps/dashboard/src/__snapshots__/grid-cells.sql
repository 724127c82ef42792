with chosen as (
  select id, ord::int from jsonb_array_elements_text($1::jsonb) with ordinality as c(id, ord)
), cells as (
  select t.base_task_id as task_id, c.ord,
         json_agg(json_build_array(t.epoch, t.status, t.reward,
                                   case when t.task_id <> t.base_task_id then t.task_id end)
                  order by t.epoch) as epochs
  from chosen c
  join tasks t on t.run_id = c.id
  group by 1, 2
)
select coalesce(json_agg(json_build_array(task_id, cells) order by task_id), '[]')::text as rows
from (select task_id, json_object_agg(ord, epochs) as cells from cells group by task_id) per_task

-- parameters:
-- $1 = "[\"run-a\",\"run-b\"]"
