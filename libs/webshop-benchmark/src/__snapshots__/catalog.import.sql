-- begin

select set_config('statement_timeout', $1, true), set_config('idle_in_transaction_session_timeout', $2, true)

-- parameters:
-- $1 = "1800000"
-- $2 = "1800000"

delete from "webshop_catalogs" where "id" = $1

-- parameters:
-- $1 = "demo"

insert into "webshop_catalogs" ("id", "version", "source", "goal_seed", "products", "goals") values ($1, $2, $3, $4, $5, $6)

-- parameters:
-- $1 = "demo"
-- $2 = "v-1"
-- $3 = "{\"demo\":true}"
-- $4 = 0
-- $5 = 0
-- $6 = 0

insert into "webshop_products" ("catalog_id", "seq", "asin", "price", "product") values ($1, $2, $3, $4, $5)

-- parameters:
-- $1 = "demo"
-- $2 = 0
-- $3 = "B000000001"
-- $4 = 12.5
-- $5 = "{\"Title\":\"A lamp\",\"category\":\"home\"}"

insert into "webshop_goals" ("catalog_id", "goal_index", "split", "asin", "instruction", "goal") values ($1, $2, $3, $4, $5, $6)

-- parameters:
-- $1 = "demo"
-- $2 = 0
-- $3 = "test"
-- $4 = "B000000001"
-- $5 = "a lamp under $20"
-- $6 = "{\"asin\":\"B000000001\",\"price_upper\":20}"

delete from "webshop_search_snapshots" where "catalog_id" = $1

-- parameters:
-- $1 = "demo"

insert into "webshop_search_snapshots" ("catalog_id", "version", "format", "bytes", "sha256", "chunks") values ($1, $2, $3, $4, $5, $6)

-- parameters:
-- $1 = "demo"
-- $2 = "v-1"
-- $3 = 1
-- $4 = 3
-- $5 = "cccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccc"
-- $6 = 0

insert into "webshop_search_snapshot_chunks" ("catalog_id", "chunk", "data") values ($1, $2, $3)

-- parameters:
-- $1 = "demo"
-- $2 = 0
-- $3 = <3 bytes>

update "webshop_search_snapshots" set "chunks" = $1 where "catalog_id" = $2

-- parameters:
-- $1 = 1
-- $2 = "demo"

update "webshop_catalogs" set "products" = $1, "goals" = $2 where "id" = $3

-- parameters:
-- $1 = 1
-- $2 = 1
-- $3 = "demo"

-- commit
