import { defineQuery } from '@benchfleet/db';
import type { TaskRow } from '../shared/view-rows.js';

// The SQL of the runs list and of a run's page, as run. Read-only; variables are psql-style
// (`:run`), so each text can be shown to the user and pasted into psql with `-v run="'…'"` or with
// the literals filled in.

export const runsListQuery = defineQuery({
  name: 'runs_list',
  title: 'Runs with their progress, success rate, mean reward and cost',
  params: [],
  sql: `
select s.run_id, s.name, s.benchmark, s.run_status, r.model, r.agent,
       s.total, s.queued, s.running, s.succeeded, s.failed, s.cancelled, s.errors, s.never_started,
       s.success_rate, s.avg_reward, s.cost_usd,
       s.created_at, r.started_at, r.finished_at,
       r.summary is not null and (r.summary->>'pending')::int = 0 as summarised
from run_summary s
join runs r on r.id = s.run_id
order by s.created_at desc`,
});

export const runQuery = defineQuery({
  name: 'run',
  title: 'The run, its counts by status and its aggregates',
  params: ['run'],
  sql: `
select s.run_id, s.name, s.benchmark, s.run_status, r.model, r.agent, r.config, r.code_version,
       s.total, s.queued, s.running, s.succeeded, s.failed, s.cancelled, s.errors, s.never_started,
       s.success_rate, s.avg_reward, s.avg_steps, s.avg_duration_seconds,
       s.tokens_in, s.tokens_out, s.cost_usd,
       s.created_at, r.started_at, r.finished_at,
       r.summary is not null and (r.summary->>'pending')::int = 0 as summarised,
       now() as as_of
from run_summary s
join runs r on r.id = s.run_id
where s.run_id = :run`,
});

export const domainsQuery = defineQuery({
  name: 'domains',
  title: 'Per-domain results',
  params: ['run'],
  sql: `
select domain, total, succeeded, failed, cancelled, errors, pending, success_rate, avg_reward, avg_steps, cost_usd
from domain_summary
where run_id = :run
order by domain`,
});

/**
 * Tasks that did not succeed, grouped by status, error class, final status, stop reason, the
 * benchmark's own reason (`reasonSql`, an expression over `t`; see `failureReason` of a
 * benchmark's display) and message.
 */
export function failuresQueryFor(reasonSql: string | undefined) {
  return defineQuery({
    name: 'failures',
    title: 'Tasks that did not succeed, grouped by error class, reason and message',
    params: ['run'],
    sql: `
select t.status, coalesce(a.error_class, case when t.status = 'error' then 'infra' else 'agent' end) as error_class,
       t.final_api_status, coalesce(t.result->>'stop_reason', '') as stop_reason,
       ${reasonSql ?? 'null::text'} as reason,
       coalesce(left(t.error, 300), '') as message,
       count(*)::int as tasks,
       (array_agg(t.task_id order by t.seq))[1:5] as examples
from tasks t
left join attempts a on a.run_id = t.run_id and a.task_id = t.task_id and a.attempt = t.attempts
where t.run_id = :run and t.status in ('failed', 'cancelled', 'error')
group by 1, 2, 3, 4, 5, 6
order by (t.status = 'error') desc, count(*) desc, 5, 6`,
  });
}

export const stepsDistributionQuery = defineQuery({
  name: 'steps_distribution',
  title: 'Settled tasks by number of steps',
  params: ['run'],
  sql: `
select total_steps as steps, count(*)::int as tasks,
       count(*) filter (where status = 'success')::int as succeeded
from tasks
where run_id = :run and status in ('success', 'failed', 'cancelled', 'error')
group by total_steps
order by total_steps`,
});

export const durationDistributionQuery = defineQuery({
  name: 'duration_distribution',
  title: 'Settled tasks by duration (30 equal bins up to the longest)',
  params: ['run'],
  sql: `
with settled as (
  select duration_ms / 1000.0 as seconds, status
  from tasks
  where run_id = :run and duration_ms is not null and status in ('success', 'failed', 'cancelled', 'error')
), bounds as (
  select greatest(max(seconds), 0.001) as longest from settled
)
select least(floor(seconds / longest * 30), 29)::int as bin,
       (longest / 30)::float8 as bin_seconds,
       count(*)::int as tasks,
       count(*) filter (where status = 'success')::int as succeeded
from settled, bounds
group by bin, longest
order by bin`,
});

/** The columns of each task row, in the order the task queries build them. */
export const TASK_COLUMNS = [
  'task_id',
  'seq',
  'domain',
  'status',
  'final_api_status',
  'attempts',
  'total_steps',
  'reward',
  'success',
  'duration_ms',
  'cost_usd',
  'error',
] as const satisfies readonly (keyof TaskRow)[];

// Postgres writes the rows as one compact JSON array of arrays (column order above): 20,000 tasks
// cost it a few milliseconds, and the server passes the text on without parsing it.
export const tasksQuery = defineQuery({
  name: 'tasks',
  title: 'Every task of the run, as one JSON array of rows',
  params: ['run'],
  sql: `
select coalesce(json_agg(json_build_array(task_id, seq, domain, status, final_api_status, attempts, total_steps,
                                          reward, success, duration_ms, cost_usd, left(error, 300)) order by seq), '[]')::text as rows
from tasks
where run_id = :run`,
});

export const changedTasksQuery = defineQuery({
  name: 'changed_tasks',
  title: 'Tasks that started or settled since a moment, as one JSON array of rows',
  params: ['run', 'since'],
  sql: `
select coalesce(json_agg(json_build_array(task_id, seq, domain, status, final_api_status, attempts, total_steps,
                                          reward, success, duration_ms, cost_usd, left(error, 300)) order by seq), '[]')::text as rows
from tasks
where run_id = :run and greatest(started_at, finished_at) >= :since::timestamptz`,
});

export const runCursorQuery = defineQuery({
  name: 'run_cursor',
  title: 'What changes when a task of the run starts or settles (polled for live updates)',
  params: ['run'],
  sql: `
select count(*) filter (where t.status = 'running')::int as running,
       count(*) filter (where t.status in ('success', 'failed', 'cancelled', 'error'))::int as settled,
       max(t.started_at) as last_start, max(t.finished_at) as last_finish,
       (select r.status || ':' || (r.summary is not null)::text from runs r where r.id = :run) as run_state
from tasks t
where t.run_id = :run`,
});
