/* prepared */ 
select goal_index, goal from webshop_goals where catalog_id = $1 and goal_index = any($2::int[])

-- parameters:
-- $1 = "demo"
-- $2 = [0,7]
