select * from "llm_input_blobs" where "run_id" = $1 and "digest" = any($2::text[])

-- parameters:
-- $1 = "run-1"
-- $2 = ["6c67a76830f76edc94bbabf8325f8429171d16137ecac5d5cd5bb2434224cc11","602a692d480da162ee42a63fd58ae216b2ba4a118b2b033c70e938650ef0e831"]
