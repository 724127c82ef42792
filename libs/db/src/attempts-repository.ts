import type { Database } from './database.js';
import type { Attempt } from './schema.js';

/** Reads of `attempts` (they are opened and closed with their task, in `TasksRepository`). */
export class AttemptsRepository {
  constructor(private readonly db: Database) {}

  /** Every attempt of the given tasks of a run, in task and attempt order. */
  async listOfTasks(runId: string, taskIds: readonly string[]): Promise<Attempt[]> {
    if (taskIds.length === 0) return [];
    return this.db
      .selectFrom('attempts')
      .selectAll()
      .where('run_id', '=', runId)
      .where('task_id', 'in', taskIds)
      .orderBy('task_id')
      .orderBy('attempt')
      .execute();
  }
}
