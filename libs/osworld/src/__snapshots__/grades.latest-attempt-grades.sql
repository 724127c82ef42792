select distinct on (task_id, attempt) * from osworld_grades
where run_id = $1
order by task_id, attempt, grade_no desc

-- parameters:
-- $1 = "run-1"
