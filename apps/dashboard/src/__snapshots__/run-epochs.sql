select e.epochs, e.tasks, e.pass_at_1, e.pass_at_n, e.pass_hat_n, e.flip_rate
from run_epochs e
where e.run_id = $1 and e.epochs > 1

-- parameters:
-- $1 = "run-1"
