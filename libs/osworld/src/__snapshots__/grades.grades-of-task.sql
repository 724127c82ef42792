select * from osworld_grades
where run_id = $1 and task_id = $2
order by attempt, grade_no

-- parameters:
-- $1 = "run-1"
-- $2 = "os-1"
