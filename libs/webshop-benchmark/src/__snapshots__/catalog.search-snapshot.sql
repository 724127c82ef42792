select * from "webshop_search_snapshots" where "catalog_id" = $1

-- parameters:
-- $1 = "demo"
