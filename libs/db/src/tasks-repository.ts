import { sql } from 'kysely';
import type { ErrorClass, SettledTaskStatus } from '@benchfleet/core';
import type { Database } from './database.js';
import { prepared } from './prepared-statements.js';
import type { NewStep, Task } from './schema.js';
import { insertStepsStatement } from './steps-repository.js';

/**
 * What the next attempt of a task writes on an earlier one it finds still running: its worker was
 * lost (killed, or stalled past its lock). A worker that was alive but could not write its
 * attempt's cause (Postgres refused or did not answer) writes it later over this presumption
 * (`recordAttemptCause`).
 */
export const WORKER_LOST_ERROR = 'worker lost: the job stalled and was redelivered';

export interface OpenedAttempt {
  attempt: number;
  task: Task;
  /** External id (e.g. a Bytebot task) that an earlier attempt left behind, to clean up. */
  previousExternalId: string | null;
}

export interface TaskOutcomeRecord {
  status: SettledTaskStatus;
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

export interface OpenAttemptRequest {
  runId: string;
  taskId: string;
  workerId: string;
  /** BullMQ's count for the job, kept for the record. */
  jobAttempt: number;
}

/** One attempt's outcome to record (`taskFinal`: the task's outcome too). */
export interface TaskBetweenAttempts {
  task_id: string;
  failed_attempt: number;
  error_class: ErrorClass | null;
  error: string | null;
  finished_at: Date | null;
}

export interface SettleRequest {
  runId: string;
  taskId: string;
  attempt: number;
  outcome: TaskOutcomeRecord;
  taskFinal: boolean;
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
    const open =
      await sql`${prepared}select 1 from tasks where run_id = ${runId} and status in ('queued', 'running') limit 1`.execute(
        db,
      );
    return open.rows.length === 0;
  };

  /** Whether a settle recorded the task's outcome and, if it did, whether that settled the run. */
  const settleResult = async (recorded: boolean, runId: string): Promise<SettleResult> => ({
    recorded,
    runSettled: recorded && (await runHasNoOpenTask(runId)),
  });

  /**
   * Opens the next attempt of each task, in one statement; undefined for a task that already has
   * an outcome (or no longer exists). Attempts are numbered here rather than by BullMQ: a job
   * redelivered after a worker died keeps its BullMQ attempt count, but it is a new attempt for us.
   * A still-running earlier attempt is closed as an infrastructure error (its worker is gone). The
   * first attempt to open starts the run. At most one request per task in a call.
   */
  const openAttempts = async (
    requests: readonly OpenAttemptRequest[],
  ): Promise<Array<OpenedAttempt | undefined>> => {
    const column = <T>(pick: (request: OpenAttemptRequest) => T) => requests.map(pick);
    const result = await sql<Task & { n: number; previous_external_id: string | null }>`${prepared}
      with input as (
        select * from unnest(${column((r) => r.runId)}::text[], ${column((r) => r.taskId)}::text[], ${column((r) => r.workerId)}::text[], ${column((r) => r.jobAttempt)}::int[])
          with ordinality as i(run_id, task_id, worker_id, job_attempt, n)
      ),
      -- A run behind a fence (its spend limit reached, or paused on infra errors) opens no attempt.
      task as (
        select t.run_id, t.task_id, t.external_id from tasks t
        join input i on t.run_id = i.run_id and t.task_id = i.task_id
        join runs r on r.id = t.run_id
        where t.status in ('queued', 'running') and r.halt is null
        for update of t
      ),
      previous as (
        select i.run_id, i.task_id, p.attempt, p.external_id from input i
        cross join lateral (
          select a.attempt, a.external_id from attempts a
          where a.run_id = i.run_id and a.task_id = i.task_id
          order by a.attempt desc limit 1
        ) p
      ),
      closed as (
        update attempts a
        set status = 'error', error_class = 'infra', error = ${sql.lit(WORKER_LOST_ERROR)}, finished_at = now()
        from task
        where a.run_id = task.run_id and a.task_id = task.task_id and a.status = 'running'
        returning a.attempt
      ),
      opened as (
        insert into attempts (run_id, task_id, attempt, job_attempt, worker_id, status)
        select task.run_id, task.task_id, coalesce(previous.attempt, 0) + 1, i.job_attempt, i.worker_id, 'running'
        from task
        join input i on i.run_id = task.run_id and i.task_id = task.task_id
        left join previous on previous.run_id = task.run_id and previous.task_id = task.task_id
        returning run_id, task_id, attempt, worker_id
      ),
      run_started as (
        update runs set status = 'running', started_at = coalesce(started_at, now())
        where id in (select run_id from opened) and status = 'queued'
        returning id
      ),
      updated as (
        update tasks t
        set status = 'running', attempts = opened.attempt, worker_id = opened.worker_id, started_at = coalesce(t.started_at, now())
        from opened
        where t.run_id = opened.run_id and t.task_id = opened.task_id
        returning t.*
      )
      select i.n::int as n, updated.*, coalesce(previous.external_id, task.external_id) as previous_external_id
      from input i
      join updated on updated.run_id = i.run_id and updated.task_id = i.task_id
      left join previous on previous.run_id = i.run_id and previous.task_id = i.task_id
      left join task on task.run_id = i.run_id and task.task_id = i.task_id
    `.execute(db);
    const opened: Array<OpenedAttempt | undefined> = requests.map(() => undefined);
    for (const row of result.rows) {
      const { n, previous_external_id: previousExternalId, ...task } = row;
      opened[Number(n) - 1] = { attempt: task.attempts, task: task as Task, previousExternalId };
    }
    return opened;
  };

  /**
   * Records the outcomes of attempts and, for those that are final, of their tasks, all in one
   * statement (a task's `started_at` becomes its `finished_at` less the outcome's duration). A task
   * row only changes while it has no outcome and the settle is for its current attempt, so a
   * duplicate delivery cannot record a second outcome. `steps` (the attempts' last ones, and any
   * other steps a StepWriter had pending) are written by the same statement. Returns, in order,
   * whether each outcome was recorded on its task; the caller asks whether runs have settled once
   * this is committed (`runHasNoOpenTask`). At most one settle per task and attempt in a call.
   */
  const settleMany = async (
    settles: readonly SettleRequest[],
    steps: readonly NewStep[] = [],
  ): Promise<boolean[]> => {
    const column = <T>(pick: (settle: SettleRequest) => T) => settles.map(pick);
    const result = (outcome: TaskOutcomeRecord) =>
      outcome.result === undefined || outcome.result === null
        ? null
        : JSON.stringify(outcome.result);
    // The steps are written from the statement's snapshot, where these attempts are still running.
    const written = await sql<{ n: number; recorded: boolean }>`${prepared}
      with input as (
        select * from unnest(
          ${column((s) => s.runId)}::text[], ${column((s) => s.taskId)}::text[], ${column((s) => s.attempt)}::int[],
          ${column((s) => s.taskFinal)}::bool[], ${column((s) => s.outcome.status)}::text[], ${column((s) => s.outcome.errorClass ?? null)}::text[],
          ${column((s) => s.outcome.error ?? null)}::text[], ${column((s) => s.outcome.externalId ?? null)}::text[],
          ${column((s) => s.outcome.finalApiStatus ?? null)}::text[], ${column((s) => s.outcome.totalSteps)}::int[],
          ${column((s) => s.outcome.reward ?? null)}::float8[], ${column((s) => s.outcome.success ?? s.outcome.status === 'success')}::bool[],
          ${column((s) => Math.round(s.outcome.durationMs))}::int[], ${column((s) => s.outcome.tokensIn ?? 0)}::int[],
          ${column((s) => s.outcome.tokensOut ?? 0)}::int[], ${column((s) => s.outcome.costUsd ?? null)}::float8[],
          ${column((s) => s.outcome.answer ?? null)}::text[], ${column((s) => result(s.outcome))}::jsonb[]
        ) with ordinality as i(run_id, task_id, attempt, task_final, status, error_class, error, external_id, final_api_status,
                               total_steps, reward, success, duration_ms, tokens_in, tokens_out, cost_usd, answer, result, n)
      ),
      new_steps as (${insertStepsStatement(steps)} returning 1),
      attempt_rows as (
        update attempts a
        set status = i.status, error_class = i.error_class, error = i.error, finished_at = now(), external_id = coalesce(i.external_id, a.external_id)
        from input i
        where a.run_id = i.run_id and a.task_id = i.task_id and a.attempt = i.attempt and a.status = 'running'
        returning a.attempt
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
            tokens_in = i.tokens_in,
            tokens_out = i.tokens_out,
            cost_usd = i.cost_usd,
            error_class = i.error_class,
            answer = i.answer,
            result = i.result,
            error = i.error,
            finished_at = now(),
            external_id = coalesce(i.external_id, t.external_id)
        from input i
        where i.task_final and t.run_id = i.run_id and t.task_id = i.task_id
          and t.status in ('queued', 'running') and t.attempts = i.attempt
        returning t.run_id, t.task_id
      )
      -- attempt_rows is read by nothing: Postgres runs every data-modifying CTE to completion anyway.
      select i.n, exists (select 1 from task_rows r where r.run_id = i.run_id and r.task_id = i.task_id) as recorded
      from input i order by i.n
    `.execute(db);
    return written.rows.map((row) => row.recorded === true);
  };

  return {
    async get(runId: string, taskId: string): Promise<Task | undefined> {
      return db
        .selectFrom('tasks')
        .selectAll()
        .where('run_id', '=', runId)
        .where('task_id', '=', taskId)
        .executeTakeFirst();
    },

    /**
     * Running tasks whose last attempt has ended (an infrastructure error BullMQ retries after a
     * back-off): between two attempts, not running one.
     */
    async betweenAttempts(runId: string): Promise<TaskBetweenAttempts[]> {
      return db
        .selectFrom('tasks as t')
        .innerJoin('attempts as a', (join) =>
          join
            .onRef('a.run_id', '=', 't.run_id')
            .onRef('a.task_id', '=', 't.task_id')
            .onRef('a.attempt', '=', 't.attempts'),
        )
        .select([
          't.task_id',
          'a.attempt as failed_attempt',
          'a.error_class',
          'a.error',
          'a.finished_at',
        ])
        .where('t.run_id', '=', runId)
        .where('t.status', '=', 'running')
        .where('a.status', '<>', 'running')
        .orderBy('t.seq')
        .execute();
    },

    /** The tasks of a run without an outcome (queued or running). */
    async openTaskIds(runId: string): Promise<string[]> {
      const rows = await db
        .selectFrom('tasks')
        .select('task_id')
        .where('run_id', '=', runId)
        .where('status', 'in', ['queued', 'running'])
        .orderBy('seq')
        .execute();
      return rows.map((row) => row.task_id);
    },

    async listByRun(runId: string): Promise<Task[]> {
      return db
        .selectFrom('tasks')
        .selectAll()
        .where('run_id', '=', runId)
        .orderBy('seq')
        .execute();
    },

    /**
     * Opens the next attempt of a task, or returns undefined when the task already has an outcome
     * (see `openAttempts`).
     */
    async openAttempt(
      runId: string,
      taskId: string,
      workerId: string,
      jobAttempt: number,
    ): Promise<OpenedAttempt | undefined> {
      const [opened] = await openAttempts([{ runId, taskId, workerId, jobAttempt }]);
      return opened;
    },

    openAttempts,

    async setExternalId(
      runId: string,
      taskId: string,
      attempt: number,
      externalId: string,
    ): Promise<void> {
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
     * Records the outcome of an attempt and, when it is final, of the task (see `settleMany`).
     * Whether the run has settled is asked after the write: of two settlers finishing together at
     * least the later one sees the run settled (both may; the aggregate job is idempotent).
     */
    async settle(
      runId: string,
      taskId: string,
      attempt: number,
      outcome: TaskOutcomeRecord,
      taskFinal = true,
      steps: readonly NewStep[] = [],
    ): Promise<SettleResult> {
      const [recorded] = await settleMany([{ runId, taskId, attempt, outcome, taskFinal }], steps);
      return settleResult(recorded === true, runId);
    },

    settleMany,

    /** Whether no task of the run is queued or running; asked after an outcome is committed. */
    runHasNoOpenTask,

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
    async reopen(
      runId: string,
      selection: { includeFailed?: boolean; statuses?: Task['status'][] } = {},
    ): Promise<Array<{ taskId: string; was: Task['status'] }>> {
      const statuses =
        selection.statuses ??
        ([
          'queued',
          'running',
          ...(selection.includeFailed ? ['failed', 'cancelled'] : []),
        ] as Task['status'][]);
      const resumableErrors = selection.statuses === undefined;
      const result = await sql<{ task_id: string; was: Task['status'] }>`
        with chosen as (
          select t.task_id, t.status, t.seq from tasks t
          where t.run_id = ${runId}
            and (t.status = any(${statuses}::text[])
              or (${resumableErrors} and t.status = 'error' and t.error_class is distinct from 'budget' and not exists (
                select 1 from attempts a
                where a.run_id = t.run_id and a.task_id = t.task_id and a.attempt = t.attempts and a.error_class in ('agent', 'permanent'))))
          for update
        ),
        reopened as (
          update tasks set status = 'queued', finished_at = null, error = null, error_class = null
          from chosen
          where tasks.run_id = ${runId} and tasks.task_id = chosen.task_id and chosen.status not in ('queued', 'running')
          returning tasks.task_id
        )
        select chosen.task_id, chosen.status as was from chosen order by chosen.seq
      `.execute(db);
      return result.rows.map((row) => ({ taskId: row.task_id, was: row.was }));
    },

    /**
     * Writes the real cause of an attempt's end (an infrastructure error, at `at`) that its worker
     * could not write when it happened: on the attempt while it is still running, or over the
     * presumption of a lost worker that a later attempt wrote meanwhile; never over any other
     * outcome. Returns whether it was written.
     */
    async recordAttemptCause(
      runId: string,
      taskId: string,
      attempt: number,
      cause: string,
      at: Date,
    ): Promise<boolean> {
      const written = await db
        .updateTable('attempts')
        .set({ status: 'error', error_class: 'infra', error: cause, finished_at: at })
        .where('run_id', '=', runId)
        .where('task_id', '=', taskId)
        .where('attempt', '=', attempt)
        .where((eb) =>
          eb.or([
            eb('status', '=', 'running'),
            eb.and([
              eb('status', '=', 'error'),
              eb('error_class', '=', 'infra'),
              eb('error', '=', WORKER_LOST_ERROR),
            ]),
          ]),
        )
        .executeTakeFirst();
      return Number(written.numUpdatedRows) > 0;
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
          update tasks set status = 'error', error_class = 'infra', error = ${reason}, finished_at = now()
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
