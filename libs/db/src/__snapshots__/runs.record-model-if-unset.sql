update "runs" set "model" = $1 where "id" = $2 and "model" is null

-- parameters:
-- $1 = "{\"name\":\"qwen2.5-7b\"}"
-- $2 = "run-1"
