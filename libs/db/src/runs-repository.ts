import { sql } from 'kysely';
import type { Database } from './database.js';
import {
  cancelOpenTasksStatement,
  cancelRunStatement,
  finishRunStatement,
  markQueuedStatement,
} from './run-outcome-statements.js';
import type { NewRun, NewTask, Run, RunHalt, RunSummaryRow } from './schema.js';

const TASK_INSERT_PAGE = 5_000;

export interface NewRunWithTasks {
  run: NewRun;
  tasks: Omit<NewTask, 'run_id'>[];
}

/** What the infra-error check found when it paused a run. */
export interface InfraHaltReport {
  /** Infra failures among the last `window` tasks whose latest attempt ended. */
  readonly infraFailed: number;
  readonly window: number;
  readonly maxRate: number;
  readonly reason: string;
}

export type RunCancelOutcome = 'cancelled' | 'already_cancelled' | 'finished' | 'not_found';

/** The `runs` table, and the statements that write a whole run's tasks at once (create, cancel). */
export class RunsRepository {
  constructor(private readonly db: Database) {}

  async get(runId: string): Promise<Run | undefined> {
    return this.db.selectFrom('runs').selectAll().where('id', '=', runId).executeTakeFirst();
  }

  /** The latest runs, newest first, as `run_summary` shows them. */
  async list(limit = 50): Promise<RunSummaryRow[]> {
    return this.db
      .selectFrom('run_summary')
      .selectAll()
      .orderBy('created_at', 'desc')
      .limit(limit)
      .execute();
  }

  async summary(runId: string): Promise<RunSummaryRow | undefined> {
    return this.db
      .selectFrom('run_summary')
      .selectAll()
      .where('run_id', '=', runId)
      .executeTakeFirst();
  }

  /** Runs neither finished nor cancelled, older than `graceMs`, with how many of their tasks are open. */
  async goingOn(
    graceMs: number,
  ): Promise<Array<{ id: string; benchmark: string; open: number; halt: RunHalt | null }>> {
    const result = await sql<{ id: string; benchmark: string; open: number; halt: RunHalt | null }>`
        select r.id, r.benchmark, r.halt, count(t.task_id) filter (where t.status in ('queued', 'running'))::int as open
        from runs r left join tasks t on t.run_id = r.id
        where r.status in ('queued', 'running') and r.created_at < now() - make_interval(secs => ${graceMs}::float8 / 1000)
        group by r.id
        order by r.created_at
      `.execute(this.db);
    return result.rows;
  }

  /** The run row and all its task rows, or nothing. */
  async createWithTasks({ run, tasks }: NewRunWithTasks): Promise<void> {
    await this.db.transaction().execute(async (trx) => {
      await trx.insertInto('runs').values(run).execute();
      for (let i = 0; i < tasks.length; i += TASK_INSERT_PAGE) {
        await insertTasksStatement(run.id, tasks.slice(i, i + TASK_INSERT_PAGE)).execute(trx);
      }
    });
  }

  async delete(runId: string): Promise<void> {
    await this.db.deleteFrom('runs').where('id', '=', runId).execute();
  }

  /** Puts a run back to `queued` for a resume or retry (`markQueuedStatement`). */
  async markQueued(runId: string): Promise<void> {
    await markQueuedStatement(this.db, runId).execute();
  }

  /** Records the model a run's tasks used when the run did not name one (the first that resolves it wins). */
  async recordModelIfUnset(runId: string, model: Record<string, unknown>): Promise<void> {
    await this.db
      .updateTable('runs')
      .set({ model: JSON.stringify(model) })
      .where('id', '=', runId)
      .where('model', 'is', null)
      .execute();
  }

  /**
   * Cancels a run that has not finished, in one transaction: the run (`cancelRunStatement`), then
   * every task without an outcome and every running attempt (`cancelOpenTasksStatement`). From then
   * on nothing is written for it: no attempt opens on a task with an outcome, a settle needs a
   * running attempt, and a step is written only for a running attempt.
   */
  async cancel(runId: string): Promise<{ outcome: RunCancelOutcome; tasks: number }> {
    return this.db.transaction().execute(async (trx) => {
      const cancelled = await cancelRunStatement(trx, runId).executeTakeFirst();
      if (!cancelled) return { outcome: await whyNotCancelled(trx, runId), tasks: 0 };
      const tasks = await cancelOpenTasksStatement(runId).execute(trx);
      return { outcome: 'cancelled', tasks: tasks.rows[0]?.n ?? 0 };
    });
  }

  /** Why workers take no new task of the run, if they do not. */
  async haltOf(runId: string): Promise<{ halt: RunHalt; reason: string | null } | undefined> {
    const row = await this.db
      .selectFrom('runs')
      .select(['halt', 'halt_reason'])
      .where('id', '=', runId)
      .executeTakeFirst();
    return row?.halt ? { halt: row.halt, reason: row.halt_reason } : undefined;
  }

  /**
   * Fences a run at its spend limit and ends its open tasks that no attempt runs now with the
   * `budget` outcome, in one statement: the tasks still queued, and those between two attempts.
   * A task whose attempt runs is left to it (its next LLM call is refused). Safe against an
   * attempt opening at the same moment: the task row is locked and re-checked on its new version
   * (still queued; still on the attempt that ended), and an attempt opens only while the run has
   * no fence. Idempotent: a second call (another worker, a refused job) ends only what is left.
   * Returns whether this call set the fence, and how many tasks it ended.
   */
  async haltForBudget(
    runId: string,
    reason: string,
  ): Promise<{ fenced: boolean; tasksEnded: number }> {
    const result = await sql<{ fenced: number; ended: number }>`
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
    `.execute(this.db);
    const row = result.rows[0];
    return { fenced: (row?.fenced ?? 0) > 0, tasksEnded: row?.ended ?? 0 };
  }

  /**
   * Pauses a run whose infra-error budget is spent, in one conditional statement: among the
   * last `infra_window` tasks (of `runs.limits`, default 20) whose latest attempt has ended, more
   * than `max_infra_error_rate` × window ended on an infrastructure fault (a task waiting to be
   * retried counts as its failed attempt). Attempts handed back at a worker's shutdown are not
   * faults and are left out. Does nothing for a run without that limit, or already fenced.
   * Returns what it found when it paused the run (to the one caller that did).
   */
  async haltOnInfraErrors(runId: string): Promise<InfraHaltReport | undefined> {
    const result = await sql<{
      infra: number;
      window_size: number;
      rate: number;
      reason: string;
    }>`
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
    `.execute(this.db);
    const row = result.rows[0];
    return row
      ? { infraFailed: row.infra, window: row.window_size, maxRate: row.rate, reason: row.reason }
      : undefined;
  }

  /** Lifts a pause on infra errors (`scheduler resume`); a spend-limit fence stays. Returns whether one was lifted. */
  async liftInfraHalt(runId: string): Promise<boolean> {
    const lifted = await this.db
      .updateTable('runs')
      .set({ halt: null, halt_reason: null, halted_at: null })
      .where('id', '=', runId)
      .where('halt', '=', 'infra')
      .executeTakeFirst();
    return Number(lifted.numUpdatedRows) > 0;
  }

  /** Stores the summary; a run with nothing pending (`finishedAt` given) is finished unless cancelled. */
  async saveSummary(runId: string, summary: unknown, finishedAt: Date | null): Promise<void> {
    await finishRunStatement(this.db, runId, summary, finishedAt).execute();
  }
}

/** Why a run the cancel did not take was not taken: gone, cancelled before, or finished. */
async function whyNotCancelled(
  db: Database,
  runId: string,
): Promise<Exclude<RunCancelOutcome, 'cancelled'>> {
  const run = await db
    .selectFrom('runs')
    .select('status')
    .where('id', '=', runId)
    .executeTakeFirst();
  if (!run) return 'not_found';
  return run.status === 'cancelled' ? 'already_cancelled' : 'finished';
}

/** One page of a run's tasks: one array parameter per column instead of one parameter per value, far less to parse. */
function insertTasksStatement(runId: string, page: readonly Omit<NewTask, 'run_id'>[]) {
  const spec = (task: Omit<NewTask, 'run_id'>) =>
    typeof task.spec === 'string' ? task.spec : JSON.stringify(task.spec ?? {});
  return sql`
            insert into tasks (run_id, task_id, seq, domain, instruction, spec)
            select ${runId}, t.task_id, t.seq, t.domain, t.instruction, t.spec
            from unnest(${page.map((t) => t.task_id)}::text[], ${page.map((t) => t.seq)}::int[],
                        ${page.map((t) => t.domain)}::text[], ${page.map((t) => t.instruction)}::text[],
                        ${page.map(spec)}::jsonb[])
              as t(task_id, seq, domain, instruction, spec)
          `;
}
