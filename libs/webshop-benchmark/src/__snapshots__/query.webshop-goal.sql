select g.goal->'attributes' as attributes, g.goal->'goal_options' as options, (g.goal->>'price_upper')::float8 as price_upper,
       g.goal->>'query' as query, g.goal->>'product_category' as category, g.asin as target_asin
from tasks t
join runs r on r.id = t.run_id
join webshop_goals g on g.catalog_id = r.config->>'catalog_id' and g.goal_index = (t.spec->>'goal_index')::int
where t.run_id = $1 and t.task_id = $2

-- parameters:
-- $1 = "run-1"
-- $2 = "goal-0"
