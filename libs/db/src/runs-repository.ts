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

    async get(runId: string): Promise<Run | undefined> {
      return db.selectFrom('runs').selectAll().where('id', '=', runId).executeTakeFirst();
    },

    async list(limit = 50): Promise<RunSummaryRow[]> {
      return db.selectFrom('run_summary').selectAll().orderBy('created_at', 'desc').limit(limit).execute();
    },

    async summary(runId: string): Promise<RunSummaryRow | undefined> {
      return db.selectFrom('run_summary').selectAll().where('run_id', '=', runId).executeTakeFirst();
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
      await db.updateTable('runs').set({ model: JSON.stringify(model) }).where('id', '=', runId).where('model', 'is', null).execute();
    },

    async markCancelled(runId: string): Promise<void> {
      await db.updateTable('runs').set({ status: 'cancelled', finished_at: new Date() }).where('id', '=', runId).execute();
    },

    /** Stores the summary; a run with nothing pending (`finishedAt` given) is finished unless cancelled. */
    async saveSummary(runId: string, summary: unknown, finishedAt: Date | null): Promise<void> {
      await db
        .updateTable('runs')
        .set({
          summary: JSON.stringify(summary),
          finished_at: finishedAt,
          status: sql`case when status = 'cancelled' or ${finishedAt === null} then status else 'finished' end` as never,
        })
        .where('id', '=', runId)
        .execute();
    },
  };
}

export type RunsRepository = ReturnType<typeof runsRepository>;
