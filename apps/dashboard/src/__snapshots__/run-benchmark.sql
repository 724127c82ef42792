select benchmark from runs where id = $1

-- parameters:
-- $1 = "run-1"
