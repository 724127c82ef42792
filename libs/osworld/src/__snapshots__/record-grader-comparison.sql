insert into osworld_grader_comparisons (run_id, task_id, attempt, port_score, port_no_score_cause,
  upstream_score, upstream_no_score_cause, agree, details)
select $1::text, $2::text, $3::int, $4::float8,
       $5::text, $6::float8, $7::text,
       $8::bool, $9::jsonb
where exists (
  select 1 from attempts a
  where a.run_id = $10::text and a.task_id = $11::text and a.attempt = $12::int
    and a.status = 'running'
)
on conflict (run_id, task_id, attempt) do nothing
returning attempt

-- parameters:
-- $1 = "run-1"
-- $2 = "os-1"
-- $3 = 1
-- $4 = 1
-- $5 = null
-- $6 = null
-- $7 = "exception"
-- $8 = false
-- $9 = "{\"port\":{\"metricVersion\":\"osworld-grading/2\",\"reason\":null,\"fidelity\":\"graded\"},\"upstream\":{\"metricVersion\":\"osworld-grading/2\",\"reason\":\"TypeError: boom\",\"fidelity\":\"graded\"}}"
-- $10 = "run-1"
-- $11 = "os-1"
-- $12 = 1
