select * from "webshop_catalogs" where "id" = $1

-- parameters:
-- $1 = "demo"
