select coalesce(json_agg(t.task_id order by t.seq), '[]')::text as task_ids
from tasks t
where t.run_id = $1
  and to_tsvector('english'::regconfig, coalesce(t.instruction, '') || ' ' || coalesce(t.answer, '') || ' ' || coalesce(t.error, '')) @@ websearch_to_tsquery('english', $2)

-- parameters:
-- $1 = "run-1"
-- $2 = "lamp"
