select id as run_id, benchmark, config, model, agent, code_version
from runs
where id in ($1, $2)

-- parameters:
-- $1 = "run-a"
-- $2 = "run-b"
