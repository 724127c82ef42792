/* prepared */ select 1 from tasks where run_id = $1 and status in ('queued', 'running') limit 1

-- parameters:
-- $1 = "run-1"
