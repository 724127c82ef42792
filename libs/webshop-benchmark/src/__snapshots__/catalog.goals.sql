select "goal_index", "split", "asin", "instruction", "goal" from "webshop_goals" where "catalog_id" = $1 order by "goal_index"

-- parameters:
-- $1 = "demo"
