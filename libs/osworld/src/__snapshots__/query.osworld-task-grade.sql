select g.attempt, g.grade_no, g.regraded_from, g.metric_version, g.final_signal, g.bytebot_status,
       g.final_signal_mapping, g.fidelity, g.fidelity_reason, g.substitutions, g.score, g.python_type,
       g.no_score_cause, g.reason, g.details, g.end_state, g.setup, g.graded_at,
       (select count(*) from osworld_grades o
        where o.run_id = g.run_id and o.task_id = g.task_id and o.attempt = g.attempt)::int as grades
from tasks t
join osworld_grades g on g.run_id = t.run_id and g.task_id = t.task_id and g.attempt = t.attempts
where t.run_id = $1 and t.task_id = $2
order by g.grade_no desc
limit 1

-- parameters:
-- $1 = "run-1"
-- $2 = "os-1"
