with latest as (
  select g.grade_no, g.metric_version from osworld_grades g
  where g.run_id = $1::text and g.task_id = $2::text and g.attempt = $3::int
  order by g.grade_no desc
  limit 1
)
insert into osworld_grades (run_id, task_id, attempt, grade_no, regraded_from, metric_version, final_signal, bytebot_status, final_signal_mapping, fidelity, fidelity_reason, substitutions, score, python_type, no_score_cause, reason, details, end_state, grader)
select $4::text, $5::text, $6::int, latest.grade_no + 1, $7::int, $8::text, $9::text, $10::text, $11::text, $12::text, $13::text, $14::text[], $15::float8, $16::text, $17::text, $18::text, $19::jsonb, $20::jsonb, $21::text
from latest
where exists (
  select 1 from osworld_grades o
  where o.run_id = $22::text and o.task_id = $23::text and o.attempt = $24::int
    and o.grade_no = $25::int
)
  and ($26::bool or latest.metric_version <> $27::text)
on conflict (run_id, task_id, attempt, grade_no) do nothing
returning grade_no

-- parameters:
-- $1 = "run-1"
-- $2 = "os-1"
-- $3 = 1
-- $4 = "run-1"
-- $5 = "os-1"
-- $6 = 1
-- $7 = 1
-- $8 = "osworld-grading/2"
-- $9 = "DONE"
-- $10 = "COMPLETED"
-- $11 = "bytebot-status-to-osworld-final-action/v1"
-- $12 = "graded"
-- $13 = null
-- $14 = []
-- $15 = 0
-- $16 = "float"
-- $17 = null
-- $18 = null
-- $19 = "{\"finalSignal\":{\"action\":\"DONE\",\"bytebotStatus\":\"COMPLETED\",\"mapping\":{\"name\":\"bytebot-status-to-osworld-final-action\",\"version\":1}},\"postconfig\":[],\"trace\":[{\"kind\":\"postconfig\",\"steps\":0}]}"
-- $20 = "[{\"name\":\"log.txt\",\"sha256\":\"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\",\"size\":3,\"uri\":\"file:///x/log.txt\"}]"
-- $21 = "port"
-- $22 = "run-1"
-- $23 = "os-1"
-- $24 = 1
-- $25 = 1
-- $26 = false
-- $27 = "osworld-grading/2"
