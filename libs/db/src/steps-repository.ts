import type { Database } from './database.js';
import type { NewStep, Step } from './schema.js';

const STEP_INSERT_PAGE = 500;

export function stepsRepository(db: Database) {
  return {
    /** Idempotent: a step already written for this attempt is left as it is. */
    async insertMany(steps: NewStep[]): Promise<void> {
      for (let i = 0; i < steps.length; i += STEP_INSERT_PAGE) {
        await db
          .insertInto('steps')
          .values(steps.slice(i, i + STEP_INSERT_PAGE))
          .onConflict((oc) => oc.columns(['run_id', 'task_id', 'attempt', 'step']).doNothing())
          .execute();
      }
    },

    async listByTask(runId: string, taskId: string, attempt?: number): Promise<Step[]> {
      let query = db.selectFrom('steps').selectAll().where('run_id', '=', runId).where('task_id', '=', taskId);
      if (attempt !== undefined) query = query.where('attempt', '=', attempt);
      return query.orderBy('attempt').orderBy('step').execute();
    },
  };
}

export type StepsRepository = ReturnType<typeof stepsRepository>;

/**
 * Collects steps from many concurrent episodes and writes them in batches: one INSERT per write
 * instead of one per step. `flush()` resolves once every step added before it is in Postgres, so
 * the steps of a finished task are always there before its result. A flush writes at once
 * whatever is pending (other episodes' steps too) without waiting for writes already under way,
 * so a finishing episode waits for one INSERT at most; steps nobody flushes go within `maxDelayMs`.
 */
export class StepWriter {
  private pending: NewStep[] = [];
  private readonly writing = new Set<Promise<void>>();
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly repository: StepsRepository,
    private readonly options: { maxBatch?: number; maxDelayMs?: number } = {},
  ) {}

  add(step: NewStep): void {
    this.pending.push(step);
    if (this.pending.length >= (this.options.maxBatch ?? 200)) void this.write().catch(() => undefined);
    else this.timer ??= setTimeout(() => void this.write().catch(() => undefined), this.options.maxDelayMs ?? 25);
  }

  /** Resolves once everything added so far is written; rejects if that write failed (the steps stay pending). */
  async flush(): Promise<void> {
    // Steps added earlier may be in writes under way: those must end too.
    const underWay = [...this.writing];
    await Promise.all([this.write(), ...underWay]);
  }

  private write(): Promise<void> {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
    const batch = this.pending;
    this.pending = [];
    if (batch.length === 0) return Promise.resolve();
    const write = this.repository.insertMany(batch).catch((error: unknown) => {
      this.pending = batch.concat(this.pending);
      throw error;
    });
    this.writing.add(write);
    const forget = (): void => void this.writing.delete(write);
    write.then(forget, forget);
    return write;
  }
}
