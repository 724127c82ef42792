import { sql, type Kysely } from 'kysely';

// Frozen once released: later schema changes go into a new migration file.
//
// Each attempt's LLM spend (tokens and USD), so that a retried task counts every attempt: the
// task's tokens_in, tokens_out and cost_usd are the sums over its attempts, and each attempt keeps
// its own. A cost of null is not known (a call of a model with no price), never a silent 0; the
// sum over a task's attempts is then null too.
//
// Rows written before this: a settled task's numbers were its last attempt's (its attempt count
// names it), and an earlier attempt's spend is what its steps recorded.

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable('attempts')
    .addColumn('tokens_in', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('tokens_out', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('cost_usd', 'float8', (c) => c.defaultTo(0))
    .execute();
  await sql`
    update attempts a
    set tokens_in = coalesce(s.tokens_in, 0), tokens_out = coalesce(s.tokens_out, 0), cost_usd = s.cost_usd
    from (
      select run_id, task_id, attempt, sum(tokens_in) as tokens_in, sum(tokens_out) as tokens_out,
             case when bool_or(cost_usd is null and tokens_in + tokens_out > 0) then null
                  else coalesce(sum(cost_usd), 0) end as cost_usd
      from steps group by run_id, task_id, attempt
    ) s
    where a.run_id = s.run_id and a.task_id = s.task_id and a.attempt = s.attempt`.execute(db);
  await sql`
    update attempts a
    set tokens_in = t.tokens_in, tokens_out = t.tokens_out, cost_usd = t.cost_usd
    from tasks t
    where a.run_id = t.run_id and a.task_id = t.task_id and a.attempt = t.attempts
      and t.status in ('success', 'failed', 'cancelled', 'error')`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable('attempts')
    .dropColumn('tokens_in')
    .dropColumn('tokens_out')
    .dropColumn('cost_usd')
    .execute();
}
