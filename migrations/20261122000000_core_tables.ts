import { sql, type Kysely } from 'kysely';

// Frozen once released: later schema changes go into a new migration file.

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('runs')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('benchmark', 'text', (c) => c.notNull().check(sql`benchmark in ('osworld', 'webshop')`))
    .addColumn('status', 'text', (c) =>
      c.notNull().defaultTo('queued').check(sql`status in ('queued', 'running', 'finished', 'cancelled')`),
    )
    .addColumn('config', 'jsonb', (c) => c.notNull().defaultTo(sql`'{}'::jsonb`))
    .addColumn('model', 'jsonb')
    .addColumn('agent', 'jsonb')
    .addColumn('code_version', 'text', (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('started_at', 'timestamptz')
    .addColumn('finished_at', 'timestamptz')
    .addColumn('summary', 'jsonb')
    .execute();
  await db.schema.createIndex('runs_created_at_idx').on('runs').column('created_at').execute();

  await db.schema
    .createTable('tasks')
    .addColumn('run_id', 'text', (c) => c.notNull().references('runs.id').onDelete('cascade'))
    .addColumn('task_id', 'text', (c) => c.notNull())
    .addColumn('seq', 'integer', (c) => c.notNull())
    .addColumn('domain', 'text', (c) => c.notNull())
    .addColumn('instruction', 'text', (c) => c.notNull())
    .addColumn('spec', 'jsonb', (c) => c.notNull().defaultTo(sql`'{}'::jsonb`))
    .addColumn('status', 'text', (c) =>
      c
        .notNull()
        .defaultTo('queued')
        .check(sql`status in ('queued', 'running', 'success', 'failed', 'cancelled', 'error')`),
    )
    .addColumn('final_api_status', 'text')
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('total_steps', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('reward', 'double precision')
    .addColumn('success', 'boolean')
    .addColumn('duration_ms', 'integer')
    .addColumn('tokens_in', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('tokens_out', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('cost_usd', 'double precision', (c) => c.notNull().defaultTo(0))
    .addColumn('answer', 'text')
    .addColumn('result', 'jsonb')
    .addColumn('error', 'text')
    .addColumn('worker_id', 'text')
    .addColumn('external_id', 'text')
    .addColumn('started_at', 'timestamptz')
    .addColumn('finished_at', 'timestamptz')
    .addPrimaryKeyConstraint('tasks_pk', ['run_id', 'task_id'])
    .execute();
  await db.schema.createIndex('tasks_run_domain_idx').on('tasks').columns(['run_id', 'domain']).execute();
  await db.schema.createIndex('tasks_run_status_idx').on('tasks').columns(['run_id', 'status']).execute();
  await db.schema.createIndex('tasks_status_idx').on('tasks').column('status').execute();

  await db.schema
    .createTable('attempts')
    .addColumn('run_id', 'text', (c) => c.notNull())
    .addColumn('task_id', 'text', (c) => c.notNull())
    .addColumn('attempt', 'integer', (c) => c.notNull())
    .addColumn('job_attempt', 'integer', (c) => c.notNull())
    .addColumn('worker_id', 'text', (c) => c.notNull())
    .addColumn('external_id', 'text')
    .addColumn('status', 'text', (c) =>
      c.notNull().check(sql`status in ('running', 'success', 'failed', 'cancelled', 'error')`),
    )
    .addColumn('error_class', 'text', (c) => c.check(sql`error_class in ('infra', 'agent')`))
    .addColumn('error', 'text')
    .addColumn('started_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('finished_at', 'timestamptz')
    .addPrimaryKeyConstraint('attempts_pk', ['run_id', 'task_id', 'attempt'])
    .addForeignKeyConstraint('attempts_task_fk', ['run_id', 'task_id'], 'tasks', ['run_id', 'task_id'], (c) =>
      c.onDelete('cascade'),
    )
    .execute();

  await db.schema
    .createTable('steps')
    .addColumn('run_id', 'text', (c) => c.notNull())
    .addColumn('task_id', 'text', (c) => c.notNull())
    .addColumn('attempt', 'integer', (c) => c.notNull())
    .addColumn('step', 'integer', (c) => c.notNull())
    .addColumn('at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('action', 'jsonb')
    .addColumn('text', 'text')
    .addColumn('observation', 'text')
    .addColumn('reward', 'double precision')
    .addColumn('screenshot_uri', 'text')
    .addColumn('external_id', 'text')
    .addColumn('tokens_in', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('tokens_out', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('latency_ms', 'integer')
    .addPrimaryKeyConstraint('steps_pk', ['run_id', 'task_id', 'attempt', 'step'])
    .addForeignKeyConstraint(
      'steps_attempt_fk',
      ['run_id', 'task_id', 'attempt'],
      'attempts',
      ['run_id', 'task_id', 'attempt'],
      (c) => c.onDelete('cascade'),
    )
    .execute();

  // Analysis views: the steps of a task's final attempt are the ones that count.
  await sql`
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
      coalesce(sum(t.cost_usd), 0)::float8 as cost_usd
    from runs r
    left join tasks t on t.run_id = r.id
    group by r.id
  `.execute(db);

  await sql`
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
      coalesce(sum(t.cost_usd), 0)::float8 as cost_usd
    from tasks t
    group by t.run_id, t.domain
  `.execute(db);

  await sql`
    create view step_stats as
    select
      s.run_id,
      t.domain,
      count(*)::int as steps,
      count(distinct (s.task_id, s.attempt))::int as episodes,
      percentile_cont(0.5) within group (order by s.latency_ms)::float8 as latency_p50_ms,
      percentile_cont(0.95) within group (order by s.latency_ms)::float8 as latency_p95_ms,
      coalesce(sum(s.tokens_in), 0)::bigint as tokens_in,
      coalesce(sum(s.tokens_out), 0)::bigint as tokens_out
    from steps s
    join tasks t on t.run_id = s.run_id and t.task_id = s.task_id
    group by s.run_id, t.domain
  `.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop view if exists step_stats`.execute(db);
  await sql`drop view if exists domain_summary`.execute(db);
  await sql`drop view if exists run_summary`.execute(db);
  await db.schema.dropTable('steps').execute();
  await db.schema.dropTable('attempts').execute();
  await db.schema.dropTable('tasks').execute();
  await db.schema.dropTable('runs').execute();
}
