import type { ErrorClass } from '@benchfleet/core';
import type { Database } from './database.js';
import type { NewStep, Task } from './schema.js';
import {
  failLostStatement,
  openAttemptsStatement,
  openTaskOfRunStatement,
  recordAttemptCauseStatement,
  recordAttemptUsageStatement,
  reopenStatement,
  restoreOutcomesStatement,
  settleStatement,
  type AttemptKey,
  type AttemptUsage,
  type OpenAttemptRequest,
  type ReopenSelection,
  type RestoreRequest,
  type SettleRequest,
  type TaskOutcomeRecord,
} from './task-outcome-statements.js';

export {
  OUTCOME_RESTORED_NOTE,
  WORKER_LOST_ERROR,
  type RestoreRequest,
  type AttemptUsage,
  type OpenAttemptRequest,
  type ReopenSelection,
  type SettleRequest,
  type TaskOutcomeRecord,
} from './task-outcome-statements.js';

export interface OpenedAttempt {
  attempt: number;
  task: Task;
  /** External id (e.g. a Bytebot task) that an earlier attempt left behind, to clean up. */
  previousExternalId: string | null;
}

/** A running task whose last attempt has ended: BullMQ retries it after a back-off. */
export interface TaskBetweenAttempts {
  task_id: string;
  failed_attempt: number;
  error_class: ErrorClass | null;
  error: string | null;
  finished_at: Date | null;
}

export interface SettleResult {
  /** False when the task already had an outcome: this attempt's outcome was not recorded. */
  recorded: boolean;
  /** True when no task of the run is queued or running any more. */
  runSettled: boolean;
}

/**
 * The `tasks` table with its `attempts`: a task's attempts are opened and closed with it, and its
 * outcome is written in the same statement as its last attempt's. The outcome-deciding statements
 * themselves are in `task-outcome-statements.ts`; this class runs them and shapes their rows.
 */
export class TasksRepository {
  constructor(private readonly db: Database) {}

  async get(runId: string, taskId: string): Promise<Task | undefined> {
    return this.db
      .selectFrom('tasks')
      .selectAll()
      .where('run_id', '=', runId)
      .where('task_id', '=', taskId)
      .executeTakeFirst();
  }

  async listByRun(runId: string): Promise<Task[]> {
    return this.db
      .selectFrom('tasks')
      .selectAll()
      .where('run_id', '=', runId)
      .orderBy('seq')
      .execute();
  }

  /** The tasks of a run without an outcome (queued or running), in run order. */
  async openTaskIds(runId: string): Promise<string[]> {
    return (await this.openTasks(runId)).map((row) => row.task_id);
  }

  /** The tasks of a run without an outcome, with which of the two they are, in run order. */
  async openTasks(runId: string): Promise<{ task_id: string; status: 'queued' | 'running' }[]> {
    const rows = await this.db
      .selectFrom('tasks')
      .select(['task_id', 'status'])
      .where('run_id', '=', runId)
      .where('status', 'in', ['queued', 'running'])
      .orderBy('seq')
      .execute();
    return rows.map((row) => ({
      task_id: row.task_id,
      status: row.status as 'queued' | 'running',
    }));
  }

  /**
   * Running tasks whose last attempt has ended (an infrastructure error BullMQ retries after a
   * back-off): between two attempts, not running one.
   */
  async betweenAttempts(runId: string): Promise<TaskBetweenAttempts[]> {
    return this.db
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
  }

  /**
   * Opens the next attempt of a task, or returns undefined when the task already has an outcome
   * (see `openAttemptsStatement`).
   */
  async openAttempt(
    runId: string,
    taskId: string,
    workerId: string,
    jobAttempt: number,
  ): Promise<OpenedAttempt | undefined> {
    const [opened] = await this.openAttempts([{ runId, taskId, workerId, jobAttempt }]);
    return opened;
  }

  /**
   * Opens the next attempt of each task in one statement (`openAttemptsStatement`), answering the
   * requests in order; undefined for a task that already has an outcome (or no longer exists). At
   * most one request per task in a call.
   */
  async openAttempts(
    requests: readonly OpenAttemptRequest[],
  ): Promise<Array<OpenedAttempt | undefined>> {
    const result = await openAttemptsStatement(requests).execute(this.db);
    const opened: Array<OpenedAttempt | undefined> = requests.map(() => undefined);
    for (const { n, previous_external_id: previousExternalId, ...task } of result.rows)
      opened[Number(n) - 1] = { attempt: task.attempts, task, previousExternalId };
    return opened;
  }

  async setExternalId(
    runId: string,
    taskId: string,
    attempt: number,
    externalId: string,
  ): Promise<void> {
    await this.db.transaction().execute(async (trx) => {
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
  }

  /**
   * Records the outcome of an attempt and, when it is final, of the task (see `settleStatement`).
   * Whether the run has settled is asked after the write (`runHasNoOpenTask`).
   */
  async settle(
    runId: string,
    taskId: string,
    attempt: number,
    outcome: TaskOutcomeRecord,
    taskFinal = true,
    steps: readonly NewStep[] = [],
  ): Promise<SettleResult> {
    const [recorded] = await this.settleMany(
      [{ runId, taskId, attempt, outcome, taskFinal }],
      steps,
    );
    return this.settleResult(recorded === true, runId);
  }

  /**
   * Records many outcomes, and `steps`, in one statement (`settleStatement`); returns, in order,
   * whether each outcome was recorded on its task. The caller asks whether runs have settled once
   * this is committed (`runHasNoOpenTask`). At most one settle per task and attempt in a call.
   */
  async settleMany(
    settles: readonly SettleRequest[],
    steps: readonly NewStep[] = [],
  ): Promise<boolean[]> {
    const written = await settleStatement(settles, steps).execute(this.db);
    return written.rows.map((row) => row.recorded === true);
  }

  /** Whether no task of the run is queued or running; asked after an outcome is committed. */
  async runHasNoOpenTask(runId: string): Promise<boolean> {
    const open = await openTaskOfRunStatement(runId).execute(this.db);
    return open.rows.length === 0;
  }

  /**
   * Makes the tasks a resume or retry selects runnable again (`reopenStatement`); returns each
   * task taken, in run order, with the status it had.
   */
  async reopen(
    runId: string,
    selection: ReopenSelection = {},
  ): Promise<Array<{ taskId: string; was: Task['status'] }>> {
    const result = await reopenStatement(runId, selection).execute(this.db);
    return result.rows.map((row) => ({ taskId: row.task_id, was: row.was }));
  }

  /**
   * Writes the real cause of an attempt's end that its worker could not write when it happened
   * (`recordAttemptCauseStatement`). Returns whether it was written.
   */
  async recordAttemptCause(
    runId: string,
    taskId: string,
    attempt: number,
    cause: string,
    at: Date,
  ): Promise<boolean> {
    const written = await recordAttemptCauseStatement(
      this.db,
      { runId, taskId, attempt },
      cause,
      at,
    ).executeTakeFirst();
    return Number(written.numUpdatedRows) > 0;
  }

  /** Writes a running attempt's spend so far (`recordAttemptUsageStatement`). */
  async recordAttemptUsage(key: AttemptKey, usage: AttemptUsage): Promise<void> {
    await recordAttemptUsageStatement(this.db, key, usage).execute();
  }

  /**
   * Records an infrastructure error for a task whose job BullMQ gave up on without our processor
   * seeing it (`failLostStatement`). Returns whether it was recorded and whether the run has settled.
   */
  async failLost(runId: string, taskId: string, reason: string): Promise<SettleResult> {
    const written = await failLostStatement(runId, taskId, reason).execute(this.db);
    return this.settleResult(written.rows[0]?.recorded === true, runId);
  }

  /**
   * Puts back acknowledged outcomes that Postgres lost in a failover (`restoreOutcomesStatement`);
   * returns, in order, whether each was restored (false: Postgres still has it, or the task was
   * re-opened on purpose).
   */
  async restoreOutcomes(restores: readonly RestoreRequest[]): Promise<boolean[]> {
    if (restores.length === 0) return [];
    const written = await restoreOutcomesStatement(restores).execute(this.db);
    return written.rows.map((row) => row.restored === true);
  }

  /** Whether a settle recorded the task's outcome and, if it did, whether that settled the run. */
  private async settleResult(recorded: boolean, runId: string): Promise<SettleResult> {
    return { recorded, runSettled: recorded && (await this.runHasNoOpenTask(runId)) };
  }
}
