// The statements that decide a run's outcome (cancelled, finished, queued again). Each is a named
// function that builds the statement without running it: `RunsRepository` runs them, and
// `run-outcome-statements.test.ts` compares their SQL to the committed snapshots. (A run starts
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
