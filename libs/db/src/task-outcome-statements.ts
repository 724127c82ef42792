// The statements that decide an attempt's and a task's outcome. Each is a named function that
// builds the statement without running it: `TasksRepository` runs them, and the SQL snapshot test
// compares their SQL to the committed snapshots (examples in `db-sql-statements.ts`), so any
// change to what decides an outcome shows in review.
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
export interface SettleRequest {
  runId: string;
  taskId: string;
  attempt: number;
  outcome: TaskOutcomeRecord;
  taskFinal: boolean;
}

/** Which tasks a resume or a retry takes (see `reopenStatement`). */
export interface ReopenSelection {
  /** A resume also takes agent failures and cancellations. */
  includeFailed?: boolean;
  /** A retry takes exactly these statuses. */
  statuses?: Task['status'][];
}

/** A row of `openAttemptsStatement`: the task as opened, `n` the request it answers (from 1). */
type OpenedAttemptRow = Task & { n: number; previous_external_id: string | null };

/** One array per column, in the order of `requests`: the statement's text never varies. */
function columnOf<R>(requests: readonly R[]) {
  return <T>(pick: (request: R) => T): T[] => requests.map(pick);
}

/**
 * Opens the next attempt of each requested task, in one statement (at most one request per task).
 * Attempts are numbered here rather than by BullMQ: a job redelivered after a worker died keeps
 * its BullMQ attempt count, but it is a new attempt for us. A still-running earlier attempt is
 * closed as an infrastructure error (its worker is gone: `WORKER_LOST_ERROR`). The first attempt
 * to open starts the run. A task that already has an outcome (or no longer exists) gets no row.
 */
export function openAttemptsStatement(requests: readonly OpenAttemptRequest[]) {
  const column = columnOf(requests);
  return sql<OpenedAttemptRow>`${prepared}
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
    `;
}

/** The outcome's result as jsonb text; none is null. */
function resultJson(outcome: TaskOutcomeRecord): string | null {
  return outcome.result === undefined || outcome.result === null
    ? null
    : JSON.stringify(outcome.result);
}

/** In the settle: the outcome's spend is at least what the attempt's calls wrote while it ran. */
const outcomeSpendCovers = sql`i.tokens_in + i.tokens_out >= a.tokens_in + a.tokens_out`;

/**
 * Records the outcomes of attempts and, for those that are final, of their tasks, in one statement
 * (at most one settle per task and attempt). An attempt is closed only while it is running. A task
 * row changes only while it has no outcome and the settle is for its current attempt, so a
 * duplicate delivery cannot record a second outcome. A task's `started_at` becomes its
 * `finished_at` less the outcome's duration. The attempt keeps its own spend; the task's tokens
 * and cost become the sums over its attempts (unknown when one attempt's cost is). `steps` (the attempts' last ones, and any other steps
 * a StepWriter had pending) are written by the same statement. One row per settle, in order:
 * whether its outcome was recorded on its task.
 */
export function settleStatement(settles: readonly SettleRequest[], steps: readonly NewStep[]) {
  const column = columnOf(settles);
  // The steps are written from the statement's snapshot, where these attempts are still running.
  return sql<{ n: number; recorded: boolean }>`${prepared}
      with input as (
        select * from unnest(
          ${column((s) => s.runId)}::text[], ${column((s) => s.taskId)}::text[], ${column((s) => s.attempt)}::int[],
          ${column((s) => s.taskFinal)}::bool[], ${column((s) => s.outcome.status)}::text[], ${column((s) => s.outcome.errorClass ?? null)}::text[],
          ${column((s) => s.outcome.error ?? null)}::text[], ${column((s) => s.outcome.externalId ?? null)}::text[],
          ${column((s) => s.outcome.finalApiStatus ?? null)}::text[], ${column((s) => s.outcome.totalSteps)}::int[],
          ${column((s) => s.outcome.reward ?? null)}::float8[], ${column((s) => s.outcome.success ?? s.outcome.status === 'success')}::bool[],
          ${column((s) => Math.round(s.outcome.durationMs))}::int[], ${column((s) => s.outcome.tokensIn ?? 0)}::int[],
          ${column((s) => s.outcome.tokensOut ?? 0)}::int[], ${column((s) => s.outcome.costUsd ?? null)}::float8[],
          ${column((s) => s.outcome.answer ?? null)}::text[], ${column((s) => resultJson(s.outcome))}::jsonb[]
        ) with ordinality as i(run_id, task_id, attempt, task_final, status, error_class, error, external_id, final_api_status,
                               total_steps, reward, success, duration_ms, tokens_in, tokens_out, cost_usd, answer, result, n)
      ),
      new_steps as (${insertStepsStatement(steps)} returning 1),
      -- The attempt's spend: the outcome's, unless the attempt's calls already recorded more.
      attempt_rows as (
        update attempts a
        set status = i.status, error_class = i.error_class, error = i.error, finished_at = now(), external_id = coalesce(i.external_id, a.external_id),
            tokens_in = case when ${outcomeSpendCovers} then i.tokens_in else a.tokens_in end,
            tokens_out = case when ${outcomeSpendCovers} then i.tokens_out else a.tokens_out end,
            cost_usd = case when ${outcomeSpendCovers} then i.cost_usd else a.cost_usd end
        from input i
        where a.run_id = i.run_id and a.task_id = i.task_id and a.attempt = i.attempt and a.status = 'running'
        returning a.run_id, a.task_id, a.attempt, a.tokens_in, a.tokens_out, a.cost_usd
      ),
      -- A task's spend is the sum over its attempts: the ones before this settle's, as recorded.
      earlier as (
        select i.n, sum(o.tokens_in) as tokens_in, sum(o.tokens_out) as tokens_out,
               sum(o.cost_usd) as cost_usd, bool_or(o.cost_usd is null) as cost_unknown
        from input i
        join attempts o on o.run_id = i.run_id and o.task_id = i.task_id and o.attempt <> i.attempt
        where i.task_final
        group by i.n
      ),
      spend as (
        select i.n,
               coalesce(ar.tokens_in, i.tokens_in) + coalesce(e.tokens_in, 0) as tokens_in,
               coalesce(ar.tokens_out, i.tokens_out) + coalesce(e.tokens_out, 0) as tokens_out,
               case when coalesce(e.cost_unknown, false) then null
                    else coalesce(ar.cost_usd, case when ar.attempt is null then i.cost_usd end) + coalesce(e.cost_usd, 0) end as cost_usd
        from input i
        left join attempt_rows ar on ar.run_id = i.run_id and ar.task_id = i.task_id and ar.attempt = i.attempt
        left join earlier e on e.n = i.n
        where i.task_final
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
            tokens_in = spend.tokens_in,
            tokens_out = spend.tokens_out,
            cost_usd = spend.cost_usd,
            error_class = i.error_class,
            answer = i.answer,
            result = i.result,
            error = i.error,
            finished_at = now(),
            external_id = coalesce(i.external_id, t.external_id)
        from input i
        join spend on spend.n = i.n
        where i.task_final and t.run_id = i.run_id and t.task_id = i.task_id
          and t.status in ('queued', 'running') and t.attempts = i.attempt
        returning t.run_id, t.task_id
      )
      select i.n, exists (select 1 from task_rows r where r.run_id = i.run_id and r.task_id = i.task_id) as recorded
      from input i order by i.n
    `;
}

/**
 * A row if some task of the run is still queued or running. Asked after an outcome is committed:
 * of two settlers finishing together at least the later one finds none, and requests the run's
 * aggregate (both may; the aggregate job is idempotent).
 */
export function openTaskOfRunStatement(runId: string) {
  return sql`${prepared}select 1 from tasks where run_id = ${runId} and status in ('queued', 'running') limit 1`;
}

/**
 * Records an infrastructure error (`reason`) for a task whose job BullMQ gave up on without our
 * processor seeing it: its running attempt is closed, and the task gets the outcome if it has none
 * yet. One row: whether the task's outcome was recorded.
 */
export function failLostStatement(runId: string, taskId: string, reason: string) {
  return sql<{ recorded: boolean; attempts_closed: number }>`
        with attempt_row as (
          update attempts set status = 'error', error_class = 'infra', error = ${reason}, finished_at = now()
          where run_id = ${runId} and task_id = ${taskId} and status = 'running'
          returning attempt
        ),
        -- The task's spend is what its attempts recorded (a lost attempt's calls wrote theirs as they were made).
        spend as (
          select sum(tokens_in) as tokens_in, sum(tokens_out) as tokens_out,
                 case when bool_or(cost_usd is null) then null else sum(cost_usd) end as cost_usd
          from attempts where run_id = ${runId} and task_id = ${taskId}
        ),
        task_row as (
          update tasks set status = 'error', error_class = 'infra', error = ${reason}, finished_at = now(),
                 tokens_in = coalesce(spend.tokens_in, 0), tokens_out = coalesce(spend.tokens_out, 0), cost_usd = spend.cost_usd
          from spend
          where run_id = ${runId} and task_id = ${taskId} and status in ('queued', 'running')
          returning task_id
        )
        select exists (select 1 from task_row) as recorded, (select count(*) from attempt_row) as attempts_closed
      `;
}

/** Identifies one attempt of one task. */
export interface AttemptKey {
  runId: string;
  taskId: string;
  attempt: number;
}

/** What an attempt has spent so far on LLM calls (cost null: a call had no price). */
export interface AttemptUsage {
  tokensIn: number;
  tokensOut: number;
  costUsd: number | null;
}

/**
 * Writes what a running attempt has spent so far, as its calls are made, so that a worker that
 * dies leaves its attempt's spend behind. A write that comes late with less than the row already
 * holds (an earlier total) changes nothing.
 */
export function recordAttemptUsageStatement(
  db: Database,
  { runId, taskId, attempt }: AttemptKey,
  usage: AttemptUsage,
) {
  return db
    .updateTable('attempts')
    .set({ tokens_in: usage.tokensIn, tokens_out: usage.tokensOut, cost_usd: usage.costUsd })
    .where('run_id', '=', runId)
    .where('task_id', '=', taskId)
    .where('attempt', '=', attempt)
    .where((eb) =>
      eb(eb('tokens_in', '+', eb.ref('tokens_out')), '<=', usage.tokensIn + usage.tokensOut),
    );
}

/**
 * Writes the real cause of an attempt's end (an infrastructure error, at `at`) that its worker
 * could not write when it happened: on the attempt while it is still running, or over the
 * presumption of a lost worker (`WORKER_LOST_ERROR`) that a later attempt wrote meanwhile; never
 * over any other outcome.
 */
export function recordAttemptCauseStatement(
  db: Database,
  { runId, taskId, attempt }: AttemptKey,
  cause: string,
  at: Date,
) {
  return db
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
    );
}

/** The statuses a selection takes; errors are decided by their last attempt (`reopenStatement`). */
function selectedStatuses(selection: ReopenSelection): Task['status'][] {
  return (
    selection.statuses ?? [
      'queued',
      'running',
      ...(selection.includeFailed ? (['failed', 'cancelled'] as const) : []),
    ]
  );
}

/**
 * Takes the tasks a resume or retry selects and puts those with an outcome back to `queued` (a
 * requeue), in one statement; open tasks are taken as they are. Rows are locked and the selection
 * is checked again on the locked row, so a task that gets its outcome while this runs is not taken
 * unless its new status is selected too: a resume never re-runs a finished task. The default
 * selection (resume) also takes an error whose last attempt was a transient (infrastructure)
 * fault; `statuses` (retry) takes exactly those statuses. One row per task taken, in run order,
 * with the status it had.
 */
export function reopenStatement(runId: string, selection: ReopenSelection) {
  const statuses = selectedStatuses(selection);
  const resumableErrors = selection.statuses === undefined;
  return sql<{ task_id: string; was: Task['status'] }>`
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
      `;
}

/** What a restored attempt says besides its own outcome: its outcome was acknowledged, then lost. */
export const OUTCOME_RESTORED_NOTE =
  "outcome lost in a database failover: restored from the worker's outcome ledger (steps written after the failover point are gone)";

/** An outcome a worker had committed, as its ledger holds it (`at`: when it was committed). */
export interface RestoreRequest {
  runId: string;
  taskId: string;
  attempt: number;
  workerId: string;
  at: Date;
  outcome: TaskOutcomeRecord;
}

/**
 * Puts back final outcomes that Postgres acknowledged and then lost (a failover to a replica that
 * had not received them), in one statement. An outcome is lost when its task is open again and its
 * attempt is missing or still running; a task re-opened on purpose (`retry`, `resume`) has its
 * attempt finished and is left alone. The attempt row is written again (its error naming the
 * failover), any other running attempt of the task (a re-run started meanwhile) is closed as
 * superseded, and the task gets the outcome at the time it was first committed, its spend the sum
 * over its attempts. Rows are locked, so a settle racing this one cannot record a second outcome.
 * One row per request, in order: whether it was restored.
 */
export function restoreOutcomesStatement(restores: readonly RestoreRequest[]) {
  const column = columnOf(restores);
  return sql<{ n: number; restored: boolean }>`
      with input as (
        select * from unnest(
          ${column((r) => r.runId)}::text[], ${column((r) => r.taskId)}::text[], ${column((r) => r.attempt)}::int[],
          ${column((r) => r.workerId)}::text[], ${column((r) => r.at.toISOString())}::timestamptz[],
          ${column((r) => r.outcome.status)}::text[], ${column((r) => r.outcome.errorClass ?? null)}::text[],
          ${column((r) => r.outcome.error ?? null)}::text[], ${column((r) => r.outcome.externalId ?? null)}::text[],
          ${column((r) => r.outcome.finalApiStatus ?? null)}::text[], ${column((r) => r.outcome.totalSteps)}::int[],
          ${column((r) => r.outcome.reward ?? null)}::float8[], ${column((r) => r.outcome.success ?? r.outcome.status === 'success')}::bool[],
          ${column((r) => Math.round(r.outcome.durationMs))}::int[], ${column((r) => r.outcome.tokensIn ?? 0)}::int[],
          ${column((r) => r.outcome.tokensOut ?? 0)}::int[], ${column((r) => r.outcome.costUsd ?? null)}::float8[],
          ${column((r) => r.outcome.answer ?? null)}::text[], ${column((r) => resultJson(r.outcome))}::jsonb[]
        ) with ordinality as i(run_id, task_id, attempt, worker_id, at, status, error_class, error, external_id, final_api_status,
                               total_steps, reward, success, duration_ms, tokens_in, tokens_out, cost_usd, answer, result, n)
      ),
      lost as (
        select i.*, i.at - make_interval(secs => i.duration_ms::float8 / 1000) as started_at from input i
        join tasks t on t.run_id = i.run_id and t.task_id = i.task_id
        where t.status in ('queued', 'running')
          and not exists (
            select 1 from attempts a
            where a.run_id = i.run_id and a.task_id = i.task_id and a.attempt = i.attempt and a.status <> 'running')
        for update of t
      ),
      superseded as (
        update attempts a
        set status = 'error', error_class = 'infra', finished_at = now(),
            error = ${sql.lit('outcome lost in a database failover: the task ran again until the outcome of attempt ')} || lost.attempt || ${sql.lit(' was restored')}
        from lost
        where a.run_id = lost.run_id and a.task_id = lost.task_id and a.attempt <> lost.attempt and a.status = 'running'
        returning a.run_id
      ),
      attempt_rows as (
        insert into attempts (run_id, task_id, attempt, job_attempt, worker_id, status, error_class, error, external_id,
                              started_at, finished_at, tokens_in, tokens_out, cost_usd)
        select run_id, task_id, attempt, 1, worker_id, status, error_class,
               case when error is null then ${OUTCOME_RESTORED_NOTE} else error || ' (' || ${OUTCOME_RESTORED_NOTE} || ')' end,
               external_id, started_at, at, tokens_in, tokens_out, cost_usd
        from lost
        on conflict (run_id, task_id, attempt) do update
        set status = excluded.status, error_class = excluded.error_class, error = excluded.error, worker_id = excluded.worker_id,
            external_id = coalesce(excluded.external_id, attempts.external_id), finished_at = excluded.finished_at,
            tokens_in = greatest(excluded.tokens_in, attempts.tokens_in), tokens_out = greatest(excluded.tokens_out, attempts.tokens_out),
            cost_usd = excluded.cost_usd
        returning run_id
      ),
      -- The task's spend: this attempt's, plus what its other attempts recorded.
      earlier as (
        select l.n, sum(o.tokens_in) as tokens_in, sum(o.tokens_out) as tokens_out,
               sum(o.cost_usd) as cost_usd, bool_or(o.cost_usd is null) as cost_unknown
        from lost l
        join attempts o on o.run_id = l.run_id and o.task_id = l.task_id and o.attempt <> l.attempt
        group by l.n
      ),
      task_rows as (
        update tasks t
        set status = l.status, final_api_status = l.final_api_status, total_steps = l.total_steps, reward = l.reward,
            success = l.success, duration_ms = l.duration_ms, started_at = l.started_at, finished_at = l.at,
            tokens_in = l.tokens_in + coalesce(e.tokens_in, 0), tokens_out = l.tokens_out + coalesce(e.tokens_out, 0),
            cost_usd = case when coalesce(e.cost_unknown, false) then null else l.cost_usd + coalesce(e.cost_usd, 0) end,
            error_class = l.error_class, answer = l.answer, result = l.result, error = l.error,
            attempts = greatest(t.attempts, l.attempt), worker_id = l.worker_id, external_id = coalesce(l.external_id, t.external_id)
        from lost l
        left join earlier e on e.n = l.n
        where t.run_id = l.run_id and t.task_id = l.task_id
        returning t.run_id, t.task_id
      )
      select i.n::int as n, exists (select 1 from task_rows r where r.run_id = i.run_id and r.task_id = i.task_id) as restored
      from input i order by i.n
    `;
}
