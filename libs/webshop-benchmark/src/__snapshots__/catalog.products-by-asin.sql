/* prepared */ 
select asin, price, product from webshop_products where catalog_id = $1 and asin = any($2::text[])

-- parameters:
-- $1 = "demo"
-- $2 = ["B000000001","B000000002"]
