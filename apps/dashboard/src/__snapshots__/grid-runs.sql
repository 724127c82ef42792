select r.id as run_id, r.name, r.benchmark, r.status, r.created_at
from runs r
left join jsonb_array_elements_text($1::jsonb) with ordinality as named(id, ord) on named.id = r.id
where (jsonb_array_length($1::jsonb) = 0 or named.id is not null)
  and ($2 = '' or strpos(lower(r.name || ' ' || r.id), lower($2)) > 0)
  and ($3 = '' or r.benchmark = $3)
order by named.ord, r.created_at desc, r.id
limit $4

-- parameters:
-- $1 = "[\"run-a\",\"run-b\"]"
-- $2 = ""
-- $3 = ""
-- $4 = 50
