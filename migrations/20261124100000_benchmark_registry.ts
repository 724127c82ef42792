import { sql, type Kysely } from 'kysely';

// Frozen once released: later schema changes go into a new migration file.
//
// Benchmarks are registered in code now, so the database no longer lists them; an attempt's error
// may also be `permanent` (a fault that retrying cannot fix); a task's cost is null when it is not
// known (tokens were used but no price was given), and the views say "unknown" (null) for a run
// or domain with such a task instead of adding it up as $0.

const COST_OF_SETTLED = sql`case when bool_or(t.cost_usd is null and t.status in ('success', 'failed', 'cancelled', 'error'))
      then null else coalesce(sum(t.cost_usd), 0)::float8 end`;

function runSummaryView(cost: ReturnType<typeof sql>) {
  return sql`
    create view run_summary as
    select
      r.id as run_id,
      r.name,
      r.benchmark,
      r.status as run_status,
      r.created_at,
      r.finished_at,
      count(t.task_id)::int as total,
      count(*) filter (where t.status = 'queued')::int as queued,
      count(*) filter (where t.status = 'running')::int as running,
      count(*) filter (where t.status = 'success')::int as succeeded,
      count(*) filter (where t.status = 'failed')::int as failed,
      count(*) filter (where t.status = 'cancelled')::int as cancelled,
      count(*) filter (where t.status = 'error')::int as errors,
      round(avg(case when t.status in ('success', 'failed', 'cancelled', 'error') then t.success::int end)::numeric, 4)::float8 as success_rate,
      round(avg(t.reward)::numeric, 4)::float8 as avg_reward,
      round(avg(t.total_steps) filter (where t.status in ('success', 'failed', 'cancelled'))::numeric, 2)::float8 as avg_steps,
      round((avg(t.duration_ms) filter (where t.status in ('success', 'failed', 'cancelled')) / 1000.0)::numeric, 2)::float8 as avg_duration_seconds,
      coalesce(sum(t.tokens_in), 0)::bigint as tokens_in,
      coalesce(sum(t.tokens_out), 0)::bigint as tokens_out,
      ${cost} as cost_usd
    from runs r
    left join tasks t on t.run_id = r.id
    group by r.id
  `;
}

function domainSummaryView(cost: ReturnType<typeof sql>) {
  return sql`
    create view domain_summary as
    select
      t.run_id,
      t.domain,
      count(*)::int as total,
      count(*) filter (where t.status = 'success')::int as succeeded,
      count(*) filter (where t.status = 'failed')::int as failed,
      count(*) filter (where t.status = 'cancelled')::int as cancelled,
      count(*) filter (where t.status = 'error')::int as errors,
      count(*) filter (where t.status in ('queued', 'running'))::int as pending,
      round(avg(case when t.status in ('success', 'failed', 'cancelled', 'error') then t.success::int end)::numeric, 4)::float8 as success_rate,
      round(avg(t.reward)::numeric, 4)::float8 as avg_reward,
      round(avg(t.total_steps) filter (where t.status in ('success', 'failed', 'cancelled'))::numeric, 2)::float8 as avg_steps,
      ${cost} as cost_usd
    from tasks t
    group by t.run_id, t.domain
  `;
}

export async function up(db: Kysely<any>): Promise<void> {
  await sql`alter table runs drop constraint if exists runs_benchmark_check`.execute(db);
  await sql`alter table runs add constraint runs_benchmark_name check (benchmark ~ '^[a-z][a-z0-9-]*$')`.execute(db);
  await sql`alter table attempts drop constraint if exists attempts_error_class_check`.execute(db);
  await sql`alter table attempts add constraint attempts_error_class_check check (error_class in ('infra', 'permanent', 'agent'))`.execute(db);
  await sql`drop view run_summary`.execute(db);
  await sql`drop view domain_summary`.execute(db);
  await sql`alter table tasks alter column cost_usd drop not null, alter column cost_usd drop default`.execute(db);
  await runSummaryView(COST_OF_SETTLED).execute(db);
  await domainSummaryView(COST_OF_SETTLED).execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop view run_summary`.execute(db);
  await sql`drop view domain_summary`.execute(db);
  await sql`update tasks set cost_usd = 0 where cost_usd is null`.execute(db);
  await sql`alter table tasks alter column cost_usd set not null, alter column cost_usd set default 0`.execute(db);
  await runSummaryView(sql`coalesce(sum(t.cost_usd), 0)::float8`).execute(db);
  await domainSummaryView(sql`coalesce(sum(t.cost_usd), 0)::float8`).execute(db);
  await sql`alter table attempts drop constraint if exists attempts_error_class_check`.execute(db);
  await sql`alter table attempts add constraint attempts_error_class_check check (error_class in ('infra', 'agent'))`.execute(db);
  await sql`alter table runs drop constraint if exists runs_benchmark_name`.execute(db);
  await sql`alter table runs add constraint runs_benchmark_check check (benchmark in ('osworld', 'webshop'))`.execute(db);
}
