insert into "llm_input_blobs" ("run_id", "digest", "kind", "body", "data", "media_type", "bytes") values ($1, $2, $3, $4, $5, $6, $7), ($8, $9, $10, $11, $12, $13, $14) on conflict ("run_id", "digest") do nothing

-- parameters:
-- $1 = "run-1"
-- $2 = "602a692d480da162ee42a63fd58ae216b2ba4a118b2b033c70e938650ef0e831"
-- $3 = "tools"
-- $4 = "[{\"function\":{\"name\":\"click\"},\"type\":\"function\"}]"
-- $5 = null
-- $6 = null
-- $7 = 49
-- $8 = "run-1"
-- $9 = "6c67a76830f76edc94bbabf8325f8429171d16137ecac5d5cd5bb2434224cc11"
-- $10 = "message"
-- $11 = "{\"content\":\"buy a lamp\",\"role\":\"user\"}"
-- $12 = null
-- $13 = null
-- $14 = 38

insert into "llm_calls" ("run_id", "task_id", "attempt", "call_no", "step", "at", "model", "message_digests", "tools_digest", "parameters", "tokens_in", "tokens_out") values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12) on conflict ("run_id", "task_id", "attempt", "call_no") do nothing

-- parameters:
-- $1 = "run-1"
-- $2 = "a"
-- $3 = 1
-- $4 = 1
-- $5 = 1
-- $6 = <Date>
-- $7 = "qwen2.5-7b"
-- $8 = ["6c67a76830f76edc94bbabf8325f8429171d16137ecac5d5cd5bb2434224cc11"]
-- $9 = "602a692d480da162ee42a63fd58ae216b2ba4a118b2b033c70e938650ef0e831"
-- $10 = "{\"temperature\":0}"
-- $11 = 12
-- $12 = 3
