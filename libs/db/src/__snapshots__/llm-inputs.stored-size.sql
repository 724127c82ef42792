select (select count(*) from llm_calls where run_id = $1) as calls,
       count(*) as blobs, coalesce(sum(bytes), 0) as bytes
from llm_input_blobs where run_id = $2

-- parameters:
-- $1 = "run-1"
-- $2 = "run-1"
