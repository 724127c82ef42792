select "asin", "price", "product" from "webshop_products" where "catalog_id" = $1 order by "seq"

-- parameters:
-- $1 = "demo"
