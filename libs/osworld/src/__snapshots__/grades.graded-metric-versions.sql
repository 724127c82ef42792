select distinct "metric_version" as value from osworld_task_grades
where run_id = $1 and grade_no is not null
order by 1

-- parameters:
-- $1 = "run-1"
