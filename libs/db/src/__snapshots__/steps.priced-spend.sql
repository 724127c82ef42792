select coalesce(sum(cost_usd), 0)::float8 as usd,
       count(*) filter (where tokens_in + tokens_out > 0)::int as llm_steps,
       count(*) filter (where tokens_in + tokens_out > 0 and cost_usd is null)::int as unpriced_steps
from steps where run_id = $1

-- parameters:
-- $1 = "run-1"
