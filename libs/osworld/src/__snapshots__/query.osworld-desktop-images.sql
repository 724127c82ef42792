select string_agg(distinct t.result->>'desktop_image', ', ') as images
from tasks t
where t.run_id = $1 and t.result ? 'desktop_image'

-- parameters:
-- $1 = "run-1"
