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
 * the steps of a finished task are always there before its result. One write runs at a time:
 * flushes asked for while it runs (episodes finishing together) share the next INSERT, so the
 * busier the worker, the larger its batches, and an idle one writes at once.
 */
export class StepWriter {
  private pending: NewStep[] = [];
  /** Settles when the steps now pending are written (or their write failed). */
  private pendingWritten: Deferred | null = null;
  private writing: Promise<void> | null = null;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly repository: StepsRepository,
    private readonly options: { maxBatch?: number; maxDelayMs?: number } = {},
  ) {}

  add(step: NewStep): void {
    this.pending.push(step);
    if (this.pending.length >= (this.options.maxBatch ?? 200)) this.write();
    else this.timer ??= setTimeout(() => this.write(), this.options.maxDelayMs ?? 25);
  }

  /** Resolves once everything added so far is written; rejects if that write failed (the steps stay pending). */
  async flush(): Promise<void> {
    if (this.pending.length === 0) {
      await this.writing;
      return;
    }
    this.pendingWritten ??= deferred();
    const written = this.pendingWritten.promise;
    this.write();
    return written;
  }

  private write(): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
    // The running write starts the next batch when it ends.
    if (this.writing !== null || this.pending.length === 0) return;
    const batch = this.pending;
    const written = this.pendingWritten;
    this.pending = [];
    this.pendingWritten = null;
    this.writing = this.repository.insertMany(batch).then(
      () => {
        this.writing = null;
        written?.resolve();
        this.next();
      },
      (error: unknown) => {
        this.writing = null;
        this.pending = batch.concat(this.pending);
        written?.reject(error);
        this.next();
        throw error;
      },
    );
    this.writing.catch(() => undefined);
  }

  /** After a write: flushes waiting for the pending steps get them written now; other steps within the delay. */
  private next(): void {
    if (this.pendingWritten !== null) this.write();
    else if (this.pending.length > 0) this.timer ??= setTimeout(() => this.write(), this.options.maxDelayMs ?? 25);
  }
}

interface Deferred {
  promise: Promise<void>;
  resolve(): void;
  reject(error: unknown): void;
}

function deferred(): Deferred {
  let resolve!: () => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<void>((ok, fail) => {
    resolve = ok;
    reject = fail;
  });
  promise.catch(() => undefined);
  return { promise, resolve, reject };
}
