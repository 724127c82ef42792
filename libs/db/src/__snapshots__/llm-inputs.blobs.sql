select * from "llm_input_blobs" where "run_id" = $1 and "digest" = any($2::text[])

-- parameters:
-- $1 = "run-1"
-- $2 = ["6c67a76830f76edc94bbabf8325f8429171d16137ecac5d5cd5bb2434224cc11"]
