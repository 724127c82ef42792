select tasks, graded, scored, no_score, degraded, ungraded,
       claimed_and_passed, claimed_but_failed, unclaimed_but_passed, unclaimed_and_failed,
       claimed_success_rate, graded_success_rate, mean_score
from osworld_run_grading
where run_id = $1

-- parameters:
-- $1 = "run-1"
