/* prepared */ 
insert into osworld_grades (run_id, task_id, attempt, grade_no, regraded_from, metric_version, final_signal, bytebot_status, final_signal_mapping, fidelity, fidelity_reason, substitutions, score, python_type, no_score_cause, reason, details, end_state, grader, setup)
select $1::text, $2::text, $3::int, 1, null, $4::text, $5::text, $6::text, $7::text, $8::text, $9::text, $10::text[], $11::float8, $12::text, $13::text, $14::text, $15::jsonb, $16::jsonb, $17::text,
       $18::jsonb
where exists (
  select 1 from attempts a
  where a.run_id = $19::text and a.task_id = $20::text and a.attempt = $21::int
    and a.status = 'running'
)
on conflict (run_id, task_id, attempt, grade_no) do nothing
returning grade_no

-- parameters:
-- $1 = "run-1"
-- $2 = "os-1"
-- $3 = 1
-- $4 = "osworld-grading/2"
-- $5 = "DONE"
-- $6 = "COMPLETED"
-- $7 = "bytebot-status-to-osworld-final-action/v1"
-- $8 = "graded"
-- $9 = null
-- $10 = []
-- $11 = 1
-- $12 = "float"
-- $13 = null
-- $14 = null
-- $15 = "{\"finalSignal\":{\"action\":\"DONE\",\"bytebotStatus\":\"COMPLETED\",\"mapping\":{\"name\":\"bytebot-status-to-osworld-final-action\",\"version\":1}},\"postconfig\":[],\"trace\":[{\"kind\":\"postconfig\",\"steps\":0}]}"
-- $16 = "[{\"name\":\"log.txt\",\"sha256\":\"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\",\"size\":3,\"uri\":\"file:///x/log.txt\"}]"
-- $17 = "port"
-- $18 = null
-- $19 = "run-1"
-- $20 = "os-1"
-- $21 = 1
