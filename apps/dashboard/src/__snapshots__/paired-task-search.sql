select coalesce(json_agg(distinct t.task_id), '[]')::text as task_ids
from tasks t
where t.run_id in ($1, $2)
  and to_tsvector('english'::regconfig, coalesce(t.instruction, '') || ' ' || coalesce(t.answer, '') || ' ' || coalesce(t.error, '')) @@ websearch_to_tsquery('english', $3)

-- parameters:
-- $1 = "run-a"
-- $2 = "run-b"
-- $3 = "lamp"
