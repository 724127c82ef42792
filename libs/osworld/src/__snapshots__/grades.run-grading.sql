select * from osworld_run_grading where run_id = $1

-- parameters:
-- $1 = "run-1"
