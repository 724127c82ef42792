insert into steps (run_id, task_id, attempt, step, at, action, text, observation, reward, screenshot_uri, external_id, tokens_in, tokens_out, latency_ms, cost_usd)
select s.run_id, s.task_id, s.attempt, s.step, coalesce(s.at, now()), s.action, s.text, s.observation, s.reward, s.screenshot_uri, s.external_id,
       coalesce(s.tokens_in, 0), coalesce(s.tokens_out, 0), s.latency_ms, s.cost_usd
from unnest(
  $1::text[], $2::text[], $3::int[],
  $4::int[], $5::timestamptz[], $6::jsonb[],
  $7::text[], $8::text[], $9::float8[],
  $10::text[], $11::text[],
  $12::int[], $13::int[], $14::int[],
  $15::float8[]
) as s(run_id, task_id, attempt, step, at, action, text, observation, reward, screenshot_uri, external_id, tokens_in, tokens_out, latency_ms, cost_usd)
where exists (
  select 1 from attempts a
  where a.run_id = s.run_id and a.task_id = s.task_id and a.attempt = s.attempt and a.status = 'running'
)
on conflict (run_id, task_id, attempt, step) do nothing

-- parameters:
-- $1 = ["run-1"]
-- $2 = ["succeeds"]
-- $3 = [1]
-- $4 = [3]
-- $5 = ["1970-01-01T00:00:00.000Z"]
-- $6 = ["{\"type\":\"click\"}"]
-- $7 = ["clicked"]
-- $8 = [null]
-- $9 = [null]
-- $10 = [null]
-- $11 = [null]
-- $12 = [10]
-- $13 = [2]
-- $14 = [300]
-- $15 = [null]
