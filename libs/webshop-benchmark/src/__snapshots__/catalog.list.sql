select * from "webshop_catalogs" order by "imported_at" desc

-- parameters:
