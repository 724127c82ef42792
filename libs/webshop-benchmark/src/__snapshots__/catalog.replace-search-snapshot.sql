-- begin

select set_config('statement_timeout', $1, true), set_config('idle_in_transaction_session_timeout', $2, true)

-- parameters:
-- $1 = "1800000"
-- $2 = "1800000"

select "version" from "webshop_catalogs" where "id" = $1 for update

-- parameters:
-- $1 = "demo"

-- rollback
