select distinct coalesce(goal->>'category', 'webshop') as "category" from "webshop_goals" where "catalog_id" = $1 order by "category"

-- parameters:
-- $1 = "demo"
