/* prepared */ 
   with input as (
     select * from unnest(
       $1::text[], $2::text[], $3::int[],
       $4::bool[], $5::text[], $6::text[],
       $7::text[], $8::text[],
       $9::text[], $10::int[],
       $11::float8[], $12::bool[],
       $13::int[], $14::int[],
       $15::int[], $16::float8[],
       $17::text[], $18::jsonb[]
     ) with ordinality as i(run_id, task_id, attempt, task_final, status, error_class, error, external_id, final_api_status,
                            total_steps, reward, success, duration_ms, tokens_in, tokens_out, cost_usd, answer, result, n)
   ),
   new_steps as (
 insert into steps (run_id, task_id, attempt, step, at, action, text, observation, reward, screenshot_uri, external_id, tokens_in, tokens_out, latency_ms, cost_usd)
 select s.run_id, s.task_id, s.attempt, s.step, coalesce(s.at, now()), s.action, s.text, s.observation, s.reward, s.screenshot_uri, s.external_id,
        coalesce(s.tokens_in, 0), coalesce(s.tokens_out, 0), s.latency_ms, s.cost_usd
 from unnest(
   $19::text[], $20::text[], $21::int[],
   $22::int[], $23::timestamptz[], $24::jsonb[],
   $25::text[], $26::text[], $27::float8[],
   $28::text[], $29::text[],
   $30::int[], $31::int[], $32::int[],
   $33::float8[]
 ) as s(run_id, task_id, attempt, step, at, action, text, observation, reward, screenshot_uri, external_id, tokens_in, tokens_out, latency_ms, cost_usd)
 where exists (
   select 1 from attempts a
   where a.run_id = s.run_id and a.task_id = s.task_id and a.attempt = s.attempt and a.status = 'running'
 )
 on conflict (run_id, task_id, attempt, step) do nothing
returning 1),
   -- The attempt's spend: the outcome's, unless the attempt's calls already recorded more.
   attempt_rows as (
     update attempts a
     set status = i.status, error_class = i.error_class, error = i.error, finished_at = now(), external_id = coalesce(i.external_id, a.external_id),
         tokens_in = case when i.tokens_in + i.tokens_out >= a.tokens_in + a.tokens_out then i.tokens_in else a.tokens_in end,
         tokens_out = case when i.tokens_in + i.tokens_out >= a.tokens_in + a.tokens_out then i.tokens_out else a.tokens_out end,
         cost_usd = case when i.tokens_in + i.tokens_out >= a.tokens_in + a.tokens_out then i.cost_usd else a.cost_usd end
     from input i
     where a.run_id = i.run_id and a.task_id = i.task_id and a.attempt = i.attempt and a.status = 'running'
     returning a.run_id, a.task_id, a.attempt, a.tokens_in, a.tokens_out, a.cost_usd
   ),
   -- A task's spend is the sum over its attempts: the ones before this settle's, as recorded.
   earlier as (
     select i.n, sum(o.tokens_in) as tokens_in, sum(o.tokens_out) as tokens_out,
            sum(o.cost_usd) as cost_usd, bool_or(o.cost_usd is null) as cost_unknown
     from input i
     join attempts o on o.run_id = i.run_id and o.task_id = i.task_id and o.attempt <> i.attempt
     where i.task_final
     group by i.n
   ),
   spend as (
     select i.n,
            coalesce(ar.tokens_in, i.tokens_in) + coalesce(e.tokens_in, 0) as tokens_in,
            coalesce(ar.tokens_out, i.tokens_out) + coalesce(e.tokens_out, 0) as tokens_out,
            case when coalesce(e.cost_unknown, false) then null
                 else coalesce(ar.cost_usd, case when ar.attempt is null then i.cost_usd end) + coalesce(e.cost_usd, 0) end as cost_usd
     from input i
     left join attempt_rows ar on ar.run_id = i.run_id and ar.task_id = i.task_id and ar.attempt = i.attempt
     left join earlier e on e.n = i.n
     where i.task_final
   ),
   task_rows as (
     update tasks t
     set status = i.status,
         final_api_status = i.final_api_status,
         total_steps = i.total_steps,
         reward = i.reward,
         success = i.success,
         duration_ms = i.duration_ms,
         -- started_at + duration_ms = finished_at, by construction: the three never disagree.
         started_at = now() - make_interval(secs => i.duration_ms::float8 / 1000),
         tokens_in = spend.tokens_in,
         tokens_out = spend.tokens_out,
         cost_usd = spend.cost_usd,
         error_class = i.error_class,
         answer = i.answer,
         result = i.result,
         error = i.error,
         finished_at = now(),
         external_id = coalesce(i.external_id, t.external_id)
     from input i
     join spend on spend.n = i.n
     where i.task_final and t.run_id = i.run_id and t.task_id = i.task_id
       and t.status in ('queued', 'running') and t.attempts = i.attempt
     returning t.run_id, t.task_id
   )
   select i.n, exists (select 1 from task_rows r where r.run_id = i.run_id and r.task_id = i.task_id) as recorded
   from input i order by i.n

-- parameters:
-- $1 = ["run-1","run-1"]
-- $2 = ["succeeds","fails"]
-- $3 = [1,2]
-- $4 = [true,true]
-- $5 = ["success","failed"]
-- $6 = [null,null]
-- $7 = [null,null]
-- $8 = ["bytebot-1",null]
-- $9 = ["COMPLETED","NEEDS_HELP"]
-- $10 = [3,5]
-- $11 = [1,null]
-- $12 = [true,false]
-- $13 = [1234,2000]
-- $14 = [100,0]
-- $15 = [20,0]
-- $16 = [0.01,null]
-- $17 = ["done",null]
-- $18 = ["{\"score\":1}",null]
-- $19 = []
-- $20 = []
-- $21 = []
-- $22 = []
-- $23 = []
-- $24 = []
-- $25 = []
-- $26 = []
-- $27 = []
-- $28 = []
-- $29 = []
-- $30 = []
-- $31 = []
-- $32 = []
-- $33 = []
