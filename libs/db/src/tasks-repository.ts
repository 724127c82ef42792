import { sql } from 'kysely';
import type { ErrorClass, FinalTaskStatus } from '@benchfleet/core';
import type { Database } from './database.js';
import { prepared } from './prepared-statements.js';
import type { NewStep, Task } from './schema.js';
import { insertStepsStatement } from './steps-repository.js';

export interface OpenedAttempt {
  attempt: number;
  task: Task;
  /** External id (e.g. a Bytebot task) that an earlier attempt left behind, to clean up. */
  previousExternalId: string | null;
}

export interface TaskOutcomeRecord {
  status: FinalTaskStatus;
  errorClass?: ErrorClass | null;
  finalApiStatus?: string | null;
  totalSteps: number;
  reward?: number | null;
  success?: boolean | null;
  durationMs: number;
  tokensIn?: number;
  tokensOut?: number;
  /** null or left out: not known. */
  costUsd?: number | null;
  answer?: string | null;
  result?: unknown;
  error?: string | null;
  externalId?: string | null;
}

export interface SettleResult {
  /** False when the task already had an outcome: this attempt's outcome was not recorded. */
  recorded: boolean;
  /** True when no task of the run is queued or running any more. */
  runSettled: boolean;
}

export function tasksRepository(db: Database) {
  // Asked after an outcome is committed, so that of two settlers at least the later one sees it.
  const runHasNoOpenTask = async (runId: string): Promise<boolean> => {
    const open = await sql`${prepared}select 1 from tasks where run_id = ${runId} and status in ('queued', 'running') limit 1`.execute(db);
    return open.rows.length === 0;
  };

  /** Whether a settle recorded the task's outcome and, if it did, whether that settled the run. */
  const settleResult = async (recorded: boolean, runId: string): Promise<SettleResult> => ({
    recorded,
    runSettled: recorded && (await runHasNoOpenTask(runId)),
  });

  return {
    async get(runId: string, taskId: string): Promise<Task | undefined> {
      return db
        .selectFrom('tasks')
        .selectAll()
        .where('run_id', '=', runId)
        .where('task_id', '=', taskId)
        .executeTakeFirst();
    },

    /** The tasks of a run without an outcome (queued or running). */
    async openTaskIds(runId: string): Promise<string[]> {
      const rows = await db.selectFrom('tasks').select('task_id').where('run_id', '=', runId).where('status', 'in', ['queued', 'running']).orderBy('seq').execute();
      return rows.map((row) => row.task_id);
    },

    async listByRun(runId: string): Promise<Task[]> {
      return db.selectFrom('tasks').selectAll().where('run_id', '=', runId).orderBy('seq').execute();
    },

    /**
     * Opens the next attempt of a task, or returns undefined when the task already has an outcome.
     * Attempts are numbered here rather than by BullMQ: a job redelivered after a worker died keeps
     * its BullMQ attempt count, but it is a new attempt for us. A still-running earlier attempt is
     * closed as an infrastructure error (its worker is gone). One statement, one round trip: this
     * runs once per episode on the hot path.
     */
    async openAttempt(runId: string, taskId: string, workerId: string, jobAttempt: number): Promise<OpenedAttempt | undefined> {
      const result = await sql<Task & { previous_external_id: string | null }>`${prepared}
        with task as (
          select run_id, task_id, external_id from tasks
          where run_id = ${runId} and task_id = ${taskId} and status in ('queued', 'running')
          for update
        ),
        previous as (
          select attempt, external_id from attempts
          where run_id = ${runId} and task_id = ${taskId}
          order by attempt desc limit 1
        ),
        closed as (
          update attempts
          set status = 'error', error_class = 'infra', error = 'worker lost: the job stalled and was redelivered', finished_at = now()
          where run_id = ${runId} and task_id = ${taskId} and status = 'running' and exists (select 1 from task)
          returning attempt
        ),
        opened as (
          insert into attempts (run_id, task_id, attempt, job_attempt, worker_id, status)
          select ${runId}, ${taskId}, coalesce((select attempt from previous), 0) + 1, ${jobAttempt}, ${workerId}, 'running'
          from task
          returning attempt
        ),
        run_started as (
          update runs set status = 'running', started_at = coalesce(started_at, now())
          where id = ${runId} and status = 'queued' and exists (select 1 from opened)
          returning id
        ),
        updated as (
          update tasks
          set status = 'running', attempts = opened.attempt, worker_id = ${workerId}, started_at = coalesce(tasks.started_at, now())
          from opened
          where tasks.run_id = ${runId} and tasks.task_id = ${taskId}
          returning tasks.*
        )
        select updated.*, coalesce((select external_id from previous), (select external_id from task)) as previous_external_id
        from updated
      `.execute(db);
      const row = result.rows[0];
      if (!row) return undefined;
      const { previous_external_id: previousExternalId, ...task } = row;
      return { attempt: task.attempts, task: task as Task, previousExternalId };
    },

    async setExternalId(runId: string, taskId: string, attempt: number, externalId: string): Promise<void> {
      await db.transaction().execute(async (trx) => {
        await trx
          .updateTable('attempts')
          .set({ external_id: externalId })
          .where('run_id', '=', runId)
          .where('task_id', '=', taskId)
          .where('attempt', '=', attempt)
          .execute();
        await trx
          .updateTable('tasks')
          .set({ external_id: externalId })
          .where('run_id', '=', runId)
          .where('task_id', '=', taskId)
          .execute();
      });
    },

    /**
     * Records the outcome of an attempt and, when it is final, of the task, in one statement (the
     * task's `started_at` becomes its `finished_at` less the outcome's duration). The
     * task row only changes while it has no outcome and this is its current attempt, so a duplicate
     * delivery cannot record a second outcome. `steps` (the attempt's last ones, and any other
     * steps a StepWriter had pending) are written by the same statement. Whether the run has settled is asked after the
     * write: of two settlers finishing together at least the later one sees the run settled (both
     * may; the aggregate job is idempotent).
     */
    async settle(runId: string, taskId: string, attempt: number, outcome: TaskOutcomeRecord, taskFinal = true, steps: readonly NewStep[] = []): Promise<SettleResult> {
      const externalId = outcome.externalId ?? null;
      // The steps are written from the statement's snapshot, where this attempt is still running.
      const written = await sql<{ recorded: boolean }>`${prepared}
        with new_steps as (${insertStepsStatement(steps)} returning 1),
        attempt_row as (
          update attempts
          set status = ${outcome.status}, error_class = ${outcome.errorClass ?? null}, error = ${outcome.error ?? null},
              finished_at = now(), external_id = coalesce(${externalId}, external_id)
          where run_id = ${runId} and task_id = ${taskId} and attempt = ${attempt} and status = 'running'
          returning attempt
        ),
        task_row as (
          update tasks
          set status = ${outcome.status},
              final_api_status = ${outcome.finalApiStatus ?? null},
              total_steps = ${outcome.totalSteps},
              reward = ${outcome.reward ?? null},
              success = ${outcome.success ?? outcome.status === 'success'},
              duration_ms = ${Math.round(outcome.durationMs)},
              -- started_at + duration_ms = finished_at, by construction: the three never disagree.
              started_at = now() - make_interval(secs => ${Math.round(outcome.durationMs)}::float8 / 1000),
              tokens_in = ${outcome.tokensIn ?? 0},
              tokens_out = ${outcome.tokensOut ?? 0},
              cost_usd = ${outcome.costUsd ?? null},
              answer = ${outcome.answer ?? null},
              result = ${outcome.result === undefined || outcome.result === null ? null : JSON.stringify(outcome.result)}::jsonb,
              error = ${outcome.error ?? null},
              finished_at = now(),
              external_id = coalesce(${externalId}, external_id)
          where ${taskFinal} and run_id = ${runId} and task_id = ${taskId}
            and status in ('queued', 'running') and attempts = ${attempt}
          returning task_id
        )
        select exists (select 1 from task_row) as recorded, (select count(*) from attempt_row) as attempts_closed
      `.execute(db);
      return settleResult(written.rows[0]?.recorded === true, runId);
    },

    /**
     * Takes the tasks a resume or retry selects and makes them runnable, in one statement: open
     * tasks (queued or running) are taken as they are; a selected task with an outcome is put back
     * to `queued`. Rows are locked and the selection is checked again on the locked row, so a task
     * that gets its outcome while this runs is not taken unless its new status is selected too: a
     * resume never re-runs a finished task.
     *
     * The default selection (resume): no outcome yet, or an error whose last attempt was a
     * transient (infrastructure) fault; with `includeFailed` also agent failures and cancellations.
     * `statuses` selects exactly those statuses (retry).
     */
    async reopen(runId: string, selection: { includeFailed?: boolean; statuses?: Task['status'][] } = {}): Promise<Array<{ taskId: string; was: Task['status'] }>> {
      const statuses = selection.statuses ?? (['queued', 'running', ...(selection.includeFailed ? ['failed', 'cancelled'] : [])] as Task['status'][]);
      const resumableErrors = selection.statuses === undefined;
      const result = await sql<{ task_id: string; was: Task['status'] }>`
        with chosen as (
          select t.task_id, t.status, t.seq from tasks t
          where t.run_id = ${runId}
            and (t.status = any(${statuses}::text[])
              or (${resumableErrors} and t.status = 'error' and not exists (
                select 1 from attempts a
                where a.run_id = t.run_id and a.task_id = t.task_id and a.attempt = t.attempts and a.error_class in ('agent', 'permanent'))))
          for update
        ),
        reopened as (
          update tasks set status = 'queued', finished_at = null, error = null
          from chosen
          where tasks.run_id = ${runId} and tasks.task_id = chosen.task_id and chosen.status not in ('queued', 'running')
          returning tasks.task_id
        )
        select chosen.task_id, chosen.status as was from chosen order by chosen.seq
      `.execute(db);
      return result.rows.map((row) => ({ taskId: row.task_id, was: row.was }));
    },

    /**
     * Records an infrastructure error for a task whose job BullMQ gave up on without our processor
     * seeing it (stalled or started too often): its open attempt is closed and the task, if it has
     * no outcome yet, gets one. Returns whether it was recorded and whether the run has settled.
     */
    async failLost(runId: string, taskId: string, reason: string): Promise<SettleResult> {
      const written = await sql<{ recorded: boolean }>`
        with attempt_row as (
          update attempts set status = 'error', error_class = 'infra', error = ${reason}, finished_at = now()
          where run_id = ${runId} and task_id = ${taskId} and status = 'running'
          returning attempt
        ),
        task_row as (
          update tasks set status = 'error', error = ${reason}, finished_at = now()
          where run_id = ${runId} and task_id = ${taskId} and status in ('queued', 'running')
          returning task_id
        )
        select exists (select 1 from task_row) as recorded, (select count(*) from attempt_row) as attempts_closed
      `.execute(db);
      return settleResult(written.rows[0]?.recorded === true, runId);
    },
  };
}

export type TasksRepository = ReturnType<typeof tasksRepository>;
