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
 * Collects steps from many concurrent episodes and writes them in batches: one INSERT per flush
 * instead of one per step. `flush()` resolves once every step added before it is in Postgres, so
 * the steps of a finished task are always there before its result. Flushes asked for within
 * `coalesceMs` of each other (episodes finishing together) share one INSERT rather than each
 * writing its own.
 */
export class StepWriter {
  private pending: NewStep[] = [];
  /** Settles when the steps now pending are written (or their write failed). */
  private pendingWritten: { promise: Promise<void>; resolve(): void; reject(error: unknown): void } | null = null;
  private inFlight: Promise<void> = Promise.resolve();
  private timer: NodeJS.Timeout | undefined;
  private timerDue = Number.POSITIVE_INFINITY;

  constructor(
    private readonly repository: StepsRepository,
    private readonly options: { maxBatch?: number; maxDelayMs?: number; coalesceMs?: number } = {},
  ) {}

  add(step: NewStep): void {
    this.pending.push(step);
    if (this.pending.length >= (this.options.maxBatch ?? 200)) this.write();
    else this.writeWithin(this.options.maxDelayMs ?? 25);
  }

  /** Resolves once everything added so far is written; rejects if that write failed (the steps stay pending). */
  async flush(): Promise<void> {
    if (this.pending.length === 0) return this.inFlight;
    this.pendingWritten ??= deferred();
    const written = this.pendingWritten.promise;
    this.writeWithin(this.options.coalesceMs ?? 10);
    return written;
  }

  private writeWithin(ms: number): void {
    const due = Date.now() + ms;
    if (this.timer !== undefined && this.timerDue <= due) return;
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timerDue = due;
    this.timer = setTimeout(() => this.write(), ms);
  }

  private write(): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
    this.timerDue = Number.POSITIVE_INFINITY;
    const batch = this.pending;
    const written = this.pendingWritten;
    this.pending = [];
    this.pendingWritten = null;
    if (batch.length === 0) {
      written?.resolve();
      return;
    }
    const write = this.inFlight.catch(() => undefined).then(() => this.repository.insertMany(batch));
    this.inFlight = write.then(
      () => written?.resolve(),
      (error: unknown) => {
        this.pending = batch.concat(this.pending);
        written?.reject(error);
        throw error;
      },
    );
    this.inFlight.catch(() => undefined);
  }
}

function deferred(): { promise: Promise<void>; resolve(): void; reject(error: unknown): void } {
  let resolve!: () => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<void>((ok, fail) => {
    resolve = ok;
    reject = fail;
  });
  promise.catch(() => undefined);
  return { promise, resolve, reject };
}
