// The statements that decide a run's outcome (cancelled, finished, queued again). Each is a named
// function that builds the statement without running it: `RunsRepository` runs them, and the SQL
// snapshot test compares their SQL to the committed snapshots (`db-sql-statements.ts`). (A run starts
// in `openAttemptsStatement`, with its first attempt.)
import { sql } from 'kysely';
import type { Database } from './database.js';

/** `update runs …`: a run that is neither finished nor cancelled becomes cancelled. */
export function cancelRunStatement(db: Database, runId: string) {
  return db
    .updateTable('runs')
    .set({ status: 'cancelled', finished_at: new Date() })
    .where('id', '=', runId)
    .where('status', 'in', ['queued', 'running'])
    .returning('status');
}

/**
 * The tasks of a cancelled run that have no outcome become cancelled (their steps counted), and its
 * running attempts are closed as cancelled. One row: how many tasks and attempts.
 */
export function cancelOpenTasksStatement(runId: string) {
  return sql<{ n: number; attempts: number }>`
          with cancelled_tasks as (
            update tasks set status = 'cancelled', error = 'run cancelled', finished_at = now(),
              total_steps = (select count(*) from steps s where s.run_id = tasks.run_id and s.task_id = tasks.task_id and s.attempt = tasks.attempts)
            where run_id = ${runId} and status in ('queued', 'running')
            returning task_id
          ),
          closed as (
            update attempts set status = 'cancelled', error = 'run cancelled', finished_at = now()
            where run_id = ${runId} and status = 'running'
            returning attempt
          )
          select (select count(*) from cancelled_tasks)::int as n, (select count(*) from closed)::int as attempts
        `;
}

/**
 * Stores a run's summary (its aggregate); with `finishedAt` (nothing pending) the run becomes
 * finished, unless it was cancelled: a cancel is never overwritten.
 */
export function finishRunStatement(
  db: Database,
  runId: string,
  summary: unknown,
  finishedAt: Date | null,
) {
  return db
    .updateTable('runs')
    .set({
      summary: JSON.stringify(summary),
      finished_at: finishedAt,
      status:
        sql`case when status = 'cancelled' or ${finishedAt === null} then status else 'finished' end` as never,
    })
    .where('id', '=', runId);
}

/** A run that a resume or retry takes up again is queued (and not finished) until an attempt starts it. */
export function markQueuedStatement(db: Database, runId: string) {
  return db
    .updateTable('runs')
    .set({ status: 'queued', finished_at: null })
    .where('id', '=', runId)
    .where('status', '!=', 'queued');
}

/**
 * Fences a run at its spend limit and ends its open tasks that no attempt runs now with the
 * `budget` outcome: the tasks still queued, and those between two attempts. A task whose attempt
 * runs is left to it (its next LLM call is refused). Safe against an attempt opening at the same
 * moment: the task row is locked and re-checked on its new version (still queued; still on the
 * attempt that ended), and an attempt opens only while the run has no fence. Idempotent. One row:
 * whether this statement set the fence, and how many tasks it ended.
 */
export function haltForBudgetStatement(runId: string, reason: string) {
  return sql<{ fenced: number; ended: number }>`
        with fence as (
          update runs set halt = 'budget', halt_reason = ${reason}, halted_at = now()
          where id = ${runId} and halt is distinct from 'budget' and status in ('queued', 'running')
          returning id
        ),
        between_attempts as (
          select a.task_id, a.attempt from attempts a
          join tasks t on t.run_id = a.run_id and t.task_id = a.task_id and t.attempts = a.attempt
          where a.run_id = ${runId} and t.status = 'running' and a.status <> 'running'
        ),
        ended as (
          update tasks t
          set status = 'error', error_class = 'budget', success = false, finished_at = now(),
              error = 'budget: ' || ${reason} || case when t.status = 'queued' then ' (the task never ran)' else ' (stopped between attempts)' end
          where t.run_id = ${runId}
            and (t.status = 'queued'
              or (t.status = 'running' and exists (
                select 1 from between_attempts b where b.task_id = t.task_id and b.attempt = t.attempts)))
          returning t.task_id
        )
        select (select count(*) from fence)::int as fenced, (select count(*) from ended)::int as ended
      `;
}

/**
 * Pauses a run whose infra-error budget is spent: among the last `infra_window` tasks (of
 * `runs.limits`, default 20) whose latest attempt has ended, more than `max_infra_error_rate` ×
 * window ended on an infrastructure fault (a task waiting to be retried counts as its failed
 * attempt); attempts handed back at a worker's shutdown are no fault. Nothing for a run without
 * that limit or already fenced. One row, to the one statement that paused the run.
 */
export function haltOnInfraErrorsStatement(runId: string) {
  return sql<{ infra: number; window_size: number; rate: number; reason: string }>`
        with run as (
          select id, (limits->>'max_infra_error_rate')::float8 as rate,
                 coalesce((limits->>'infra_window')::int, 20) as window_size
          from runs
          where id = ${runId} and halt is null and status in ('queued', 'running')
            and limits ? 'max_infra_error_rate'
        ),
        recent as (
          select a.status, a.error_class from tasks t
          join attempts a on a.run_id = t.run_id and a.task_id = t.task_id and a.attempt = t.attempts
          where t.run_id = (select id from run) and a.status <> 'running'
            and a.error is distinct from 'handed back at worker shutdown'
          order by a.finished_at desc
          limit (select window_size from run)
        ),
        counted as (
          select count(*) filter (where status = 'error' and error_class = 'infra')::int as infra,
                 count(*)::int as seen
          from recent
        )
        update runs r
        set halt = 'infra', halted_at = now(),
            halt_reason = format('paused: %s of the last %s settled tasks failed on infrastructure (more than %s%% of a window of %s); \`scheduler resume %s\` takes it up again',
                                 c.infra, c.seen, round((run.rate * 100)::numeric, 1), run.window_size, r.id)
        from run, counted c
        where r.id = run.id and r.halt is null and c.infra > run.rate * run.window_size
        returning c.infra, run.window_size, run.rate, r.halt_reason as reason
      `;
}

/** `scheduler resume` lifts a pause on infra errors; a spend-limit fence stays. */
export function liftInfraHaltStatement(db: Database, runId: string) {
  return db
    .updateTable('runs')
    .set({ halt: null, halt_reason: null, halted_at: null })
    .where('id', '=', runId)
    .where('halt', '=', 'infra');
}
