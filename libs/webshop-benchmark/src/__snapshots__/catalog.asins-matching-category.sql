select "asin" from "webshop_products" where "catalog_id" = $1 and product ->> 'category' = $2 order by "seq"

-- parameters:
-- $1 = "demo"
-- $2 = "home"
