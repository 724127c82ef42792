import { sql, type Kysely } from 'kysely';

// Frozen once released: later schema changes go into a new migration file.
//
// The views' mean reward now averages the rows the success rate averages (settled tasks with a
// success flag), a task that settled without a reward (an error) counting 0: a binary benchmark
// shows the same number twice, and WebShop's mean reward is the paper's (its summary already
// counted errors 0). run_summary also counts the tasks cancelled before any attempt started them
// (`never_started`), so a progress bar can tell "ran" from "cancelled before it ran"; such a task
// cost nothing, so its cost (null) no longer makes the run's cost unknown.

const SETTLED = sql`t.status in ('success', 'failed', 'cancelled', 'error')`;
const COST_OF_SETTLED = sql`case when bool_or(t.cost_usd is null and ${SETTLED} and t.attempts > 0)
      then null else coalesce(sum(t.cost_usd), 0)::float8 end`;
const COST_BEFORE = sql`case when bool_or(t.cost_usd is null and ${SETTLED})
      then null else coalesce(sum(t.cost_usd), 0)::float8 end`;

type Sql = ReturnType<typeof sql>;

function runSummaryView(avgReward: Sql, cost: Sql, extra: Sql) {
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
      round(avg(case when ${SETTLED} then t.success::int end)::numeric, 4)::float8 as success_rate,
      ${avgReward} as avg_reward,
      round(avg(t.total_steps) filter (where t.status in ('success', 'failed', 'cancelled'))::numeric, 2)::float8 as avg_steps,
      round((avg(t.duration_ms) filter (where t.status in ('success', 'failed', 'cancelled')) / 1000.0)::numeric, 2)::float8 as avg_duration_seconds,
      coalesce(sum(t.tokens_in), 0)::bigint as tokens_in,
      coalesce(sum(t.tokens_out), 0)::bigint as tokens_out,
      ${cost} as cost_usd${extra}
    from runs r
    left join tasks t on t.run_id = r.id
    group by r.id
  `;
}

function domainSummaryView(avgReward: Sql, cost: Sql) {
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
      round(avg(case when ${SETTLED} then t.success::int end)::numeric, 4)::float8 as success_rate,
      ${avgReward} as avg_reward,
      round(avg(t.total_steps) filter (where t.status in ('success', 'failed', 'cancelled'))::numeric, 2)::float8 as avg_steps,
      ${cost} as cost_usd
    from tasks t
    group by t.run_id, t.domain
  `;
}

const MEAN_REWARD_OF_SETTLED = sql`round(avg(case when ${SETTLED} and t.success is not null then coalesce(t.reward, 0) end)::numeric, 4)::float8`;
const MEAN_OF_REWARDS = sql`round(avg(t.reward)::numeric, 4)::float8`;

export async function up(db: Kysely<any>): Promise<void> {
  await sql`drop view run_summary`.execute(db);
  await sql`drop view domain_summary`.execute(db);
  await runSummaryView(
    MEAN_REWARD_OF_SETTLED,
    COST_OF_SETTLED,
    sql`,
      count(*) filter (where t.status = 'cancelled' and t.attempts = 0)::int as never_started`,
  ).execute(db);
  await domainSummaryView(MEAN_REWARD_OF_SETTLED, COST_OF_SETTLED).execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop view run_summary`.execute(db);
  await sql`drop view domain_summary`.execute(db);
  await runSummaryView(MEAN_OF_REWARDS, COST_BEFORE, sql``).execute(db);
  await domainSummaryView(MEAN_OF_REWARDS, COST_BEFORE).execute(db);
}
