-- begin

insert into "runs" ("id", "name", "benchmark", "config", "code_version", "epochs") values ($1, $2, $3, $4, $5, $6)

-- parameters:
-- $1 = "run-1"
-- $2 = "example"
-- $3 = "example"
-- $4 = "{\"split\":\"test\"}"
-- $5 = "abc123"
-- $6 = 2

insert into tasks (run_id, task_id, base_task_id, epoch, seq, domain, instruction, spec)
select $1, t.task_id, t.base_task_id, t.epoch, t.seq, t.domain, t.instruction, t.spec
from unnest($2::text[], $3::text[],
            $4::int[], $5::int[],
            $6::text[], $7::text[],
            $8::jsonb[])
  as t(task_id, base_task_id, epoch, seq, domain, instruction, spec)

-- parameters:
-- $1 = "run-1"
-- $2 = ["a","a.epoch2"]
-- $3 = ["a","a"]
-- $4 = [1,2]
-- $5 = [0,1]
-- $6 = ["d","d"]
-- $7 = ["do a","do a"]
-- $8 = ["{\"goal\":0}","{\"goal\":0}"]

-- commit
