select t.task_id, t.domain, t.spec, t.attempts as attempt,
       g.grade_no as original_grade_no, g.metric_version as original_metric_version,
       g.no_score_cause as original_no_score_cause, g.details as original_details,
       g.end_state as original_end_state, g.fidelity as original_fidelity,
       g.substitutions as original_substitutions, g.grader as original_grader,
       (select l.metric_version from osworld_grades l
        where l.run_id = t.run_id and l.task_id = t.task_id and l.attempt = t.attempts
        order by l.grade_no desc limit 1) as latest_metric_version
from tasks t
left join osworld_grades g
  on g.run_id = t.run_id and g.task_id = t.task_id and g.attempt = t.attempts and g.grade_no = 1
where t.run_id = $1 and ($2::text is null or t.task_id = $3)
order by t.seq

-- parameters:
-- $1 = "run-1"
-- $2 = "os-1"
-- $3 = "os-1"
