select seq, asin, json_build_object('Title', product -> 'Title', 'Description', product -> 'Description',
  'BulletPoints', product -> 'BulletPoints', 'options', product -> 'options') as fields
from webshop_products
where catalog_id = $1 and seq > $2
order by seq
limit $3

-- parameters:
-- $1 = "demo"
-- $2 = 0
-- $3 = 1000
