select * from osworld_domain_grading where run_id = $1 order by domain

-- parameters:
-- $1 = "run-1"
