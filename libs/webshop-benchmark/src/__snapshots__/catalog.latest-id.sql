select "id" from "webshop_catalogs" order by "imported_at" desc limit $1

-- parameters:
-- $1 = 1
