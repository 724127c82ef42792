select "asin" from "webshop_products" where "catalog_id" = $1 and (product -> 'Attributes')::jsonb ? $2 order by "seq"

-- parameters:
-- $1 = "demo"
-- $2 = "easy to clean"
