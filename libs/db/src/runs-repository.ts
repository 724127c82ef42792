import { sql } from 'kysely';
import type { Database } from './database.js';
import type { NewRun, NewTask, Run, RunSummaryRow } from './schema.js';

const TASK_INSERT_PAGE = 5_000;

export interface NewRunWithTasks {
  run: NewRun;
  tasks: Omit<NewTask, 'run_id'>[];
}

export function runsRepository(db: Database) {
  return {
    /** The run row and all its task rows, or nothing. */
    async createWithTasks({ run, tasks }: NewRunWithTasks): Promise<void> {
      await db.transaction().execute(async (trx) => {
        await trx.insertInto('runs').values(run).execute();
        for (let i = 0; i < tasks.length; i += TASK_INSERT_PAGE) {
          const page = tasks.slice(i, i + TASK_INSERT_PAGE);
          // One array parameter per column instead of one parameter per value: far less to parse.
          await sql`
            insert into tasks (run_id, task_id, seq, domain, instruction, spec)
            select ${run.id}, t.task_id, t.seq, t.domain, t.instruction, t.spec
            from unnest(${page.map((t) => t.task_id)}::text[], ${page.map((t) => t.seq)}::int[],
                        ${page.map((t) => t.domain)}::text[], ${page.map((t) => t.instruction)}::text[],
                        ${page.map((t) => (typeof t.spec === 'string' ? t.spec : JSON.stringify(t.spec ?? {})))}::jsonb[])
              as t(task_id, seq, domain, instruction, spec)
          `.execute(trx);
        }
      });
    },

    async delete(runId: string): Promise<void> {
      await db.deleteFrom('runs').where('id', '=', runId).execute();
    },

    /** Runs neither finished nor cancelled, older than `graceMs`, with how many of their tasks are open. */
    async goingOn(
      graceMs: number,
    ): Promise<Array<{ id: string; benchmark: string; open: number }>> {
      const result = await sql<{ id: string; benchmark: string; open: number }>`
        select r.id, r.benchmark, count(t.task_id) filter (where t.status in ('queued', 'running'))::int as open
        from runs r left join tasks t on t.run_id = r.id
        where r.status in ('queued', 'running') and r.created_at < now() - make_interval(secs => ${graceMs}::float8 / 1000)
        group by r.id
        order by r.created_at
      `.execute(db);
      return result.rows;
    },

    async get(runId: string): Promise<Run | undefined> {
      return db.selectFrom('runs').selectAll().where('id', '=', runId).executeTakeFirst();
    },

    async list(limit = 50): Promise<RunSummaryRow[]> {
      return db
        .selectFrom('run_summary')
        .selectAll()
        .orderBy('created_at', 'desc')
        .limit(limit)
        .execute();
    },

    async summary(runId: string): Promise<RunSummaryRow | undefined> {
      return db
        .selectFrom('run_summary')
        .selectAll()
        .where('run_id', '=', runId)
        .executeTakeFirst();
    },

    async markQueued(runId: string): Promise<void> {
      await db
        .updateTable('runs')
        .set({ status: 'queued', finished_at: null })
        .where('id', '=', runId)
        .where('status', '!=', 'queued')
        .execute();
    },

    /** Records the model a run's tasks used when the run did not name one (the first that resolves it wins). */
    async recordModelIfUnset(runId: string, model: Record<string, unknown>): Promise<void> {
      await db
        .updateTable('runs')
        .set({ model: JSON.stringify(model) })
        .where('id', '=', runId)
        .where('model', 'is', null)
        .execute();
    },

    /**
     * Cancels a run that has not finished, in one transaction: the run, every task without an
     * outcome (its steps counted) and every running attempt. From then on nothing is written for it:
     * no attempt opens on a task with an outcome, a settle needs a running attempt, and a step is
     * written only for a running attempt.
     */
    async cancel(runId: string): Promise<{
      outcome: 'cancelled' | 'already_cancelled' | 'finished' | 'not_found';
      tasks: number;
    }> {
      return db.transaction().execute(async (trx) => {
        const cancelled = await trx
          .updateTable('runs')
          .set({ status: 'cancelled', finished_at: new Date() })
          .where('id', '=', runId)
          .where('status', 'in', ['queued', 'running'])
          .returning('status')
          .executeTakeFirst();
        if (!cancelled) {
          const run = await trx
            .selectFrom('runs')
            .select('status')
            .where('id', '=', runId)
            .executeTakeFirst();
          return {
            outcome: !run
              ? 'not_found'
              : run.status === 'cancelled'
                ? 'already_cancelled'
                : 'finished',
            tasks: 0,
          };
        }
        const tasks = await sql<{ n: number }>`
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
        `.execute(trx);
        return { outcome: 'cancelled', tasks: tasks.rows[0]?.n ?? 0 };
      });
    },

    /** Stores the summary; a run with nothing pending (`finishedAt` given) is finished unless cancelled. */
    async saveSummary(runId: string, summary: unknown, finishedAt: Date | null): Promise<void> {
      await db
        .updateTable('runs')
        .set({
          summary: JSON.stringify(summary),
          finished_at: finishedAt,
          status:
            sql`case when status = 'cancelled' or ${finishedAt === null} then status else 'finished' end` as never,
        })
        .where('id', '=', runId)
        .execute();
    },
  };
}

export type RunsRepository = ReturnType<typeof runsRepository>;
