import { sql, type Kysely } from 'kysely';

// Frozen once released: later schema changes go into a new migration file.
//
// A run's limits and why its workers take no new task of it. `runs.limits` holds the spend limits
// (per run, per task) and the infra-error budget given at enqueue; `runs.halt` is the run-level
// fence workers read when they open an attempt: `budget` (its spend limit is reached: its open
// tasks end with the `budget` outcome) or `infra` (too many of its recent tasks failed on
// infrastructure: paused until `scheduler resume`), with the one line saying why.
//
// A task's outcome now says why it is an error (`tasks.error_class`, as its last attempt does), and
// an error may be `budget`: stopped by a spend limit, neither the agent's failure nor an infra
// fault. run_summary gains the run's two scores (infra failures counted as failures: the success
// rate as before; and excluded: over the tasks that ended on the agent's own outcome), the counts
// behind them, the fence, and the projected cost.

const SETTLED = sql`t.status in ('success', 'failed', 'cancelled', 'error')`;
const COST_OF_SETTLED = sql`case when bool_or(t.cost_usd is null and ${SETTLED} and t.attempts > 0)
      then null else coalesce(sum(t.cost_usd), 0)::float8 end`;
const MEAN_REWARD_OF_SETTLED = sql`round(avg(case when ${SETTLED} and t.success is not null then coalesce(t.reward, 0) end)::numeric, 4)::float8`;
const NOT_THE_AGENTS = sql`(t.status = 'error' and t.error_class in ('infra', 'budget'))`;
const RAN = sql`(${SETTLED} and t.attempts > 0)`;
const WILL_RUN = sql`(t.status in ('queued', 'running') or t.attempts > 0)`;

function runSummaryView(extra: ReturnType<typeof sql>) {
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
      ${MEAN_REWARD_OF_SETTLED} as avg_reward,
      round(avg(t.total_steps) filter (where t.status in ('success', 'failed', 'cancelled'))::numeric, 2)::float8 as avg_steps,
      round((avg(t.duration_ms) filter (where t.status in ('success', 'failed', 'cancelled')) / 1000.0)::numeric, 2)::float8 as avg_duration_seconds,
      coalesce(sum(t.tokens_in), 0)::bigint as tokens_in,
      coalesce(sum(t.tokens_out), 0)::bigint as tokens_out,
      ${COST_OF_SETTLED} as cost_usd,
      count(*) filter (where t.status = 'cancelled' and t.attempts = 0)::int as never_started${extra}
    from runs r
    left join tasks t on t.run_id = r.id
    group by r.id
  `;
}

const SCORES_AND_FENCE = sql`,
      count(*) filter (where t.status = 'error' and t.error_class = 'infra')::int as infra_failed,
      count(*) filter (where t.status = 'error' and t.error_class = 'budget')::int as budget_stopped,
      round(avg(case when ${SETTLED} and not ${NOT_THE_AGENTS} then t.success::int end)::numeric, 4)::float8 as success_rate_excluding_infra,
      case when bool_or(t.cost_usd is null and ${RAN}) or count(*) filter (where ${RAN}) = 0 then null
           else (coalesce(sum(t.cost_usd) filter (where ${RAN}), 0) / count(*) filter (where ${RAN})
                 * count(*) filter (where ${WILL_RUN}))::float8 end as projected_cost_usd,
      r.halt,
      r.halt_reason`;

export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    alter table runs
      add column limits jsonb,
      add column halt text check (halt in ('budget', 'infra')),
      add column halt_reason text,
      add column halted_at timestamptz
  `.execute(db);
  await sql`alter table attempts drop constraint if exists attempts_error_class_check`.execute(db);
  await sql`alter table attempts add constraint attempts_error_class_check check (error_class in ('infra', 'permanent', 'agent', 'budget'))`.execute(
    db,
  );
  await sql`alter table tasks add column error_class text check (error_class in ('infra', 'permanent', 'agent', 'budget'))`.execute(
    db,
  );
  // The tasks that already ended in an error say why, as their last attempt did.
  await sql`
    update tasks t set error_class = a.error_class
    from attempts a
    where a.run_id = t.run_id and a.task_id = t.task_id and a.attempt = t.attempts and t.status = 'error'
  `.execute(db);
  await sql`drop view run_summary`.execute(db);
  await runSummaryView(SCORES_AND_FENCE).execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop view run_summary`.execute(db);
  await runSummaryView(sql``).execute(db);
  await sql`alter table tasks drop column error_class`.execute(db);
  await sql`update attempts set error_class = 'permanent' where error_class = 'budget'`.execute(db);
  await sql`alter table attempts drop constraint if exists attempts_error_class_check`.execute(db);
  await sql`alter table attempts add constraint attempts_error_class_check check (error_class in ('infra', 'permanent', 'agent'))`.execute(
    db,
  );
  await sql`alter table runs drop column limits, drop column halt, drop column halt_reason, drop column halted_at`.execute(
    db,
  );
}
