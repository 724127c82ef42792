import pg from 'pg';

interface Waiting<Item, Result> {
  item: Item;
  resolve(result: Result | PromiseLike<Result>): void;
  reject(error: unknown): void;
}

export interface GroupCommitOptions<Item> {
  /** Items per statement at most (default 64). */
  maxBatch?: number;
  /** Items with the same key never share a batch: a second one waits for the next. */
  key?(item: Item): string;
  /** Whether a failed batch is written again one item at a time (default: `refusedByPostgres`). */
  retryAlone?(error: unknown): boolean;
}

/**
 * Postgres answered and refused the statement for what it holds (a constraint, a bad value, a
 * deadlock), not because it cannot be reached, is shutting down or out of resources: those fail
 * every item alike, and writing them one by one would only wait out the fault once per item.
 */
function refusedByPostgres(error: unknown): boolean {
  if (!(error instanceof pg.DatabaseError) || typeof error.code !== 'string') return false;
  return !['08', '53', '57', '58'].includes(error.code.slice(0, 2));
}

/**
 * Group commit: one statement under way at a time, and every item submitted meanwhile goes in the
 * next one together. A worker's episodes start and end many at a time, so its per-episode
 * statements (open an attempt, record an outcome, fetch a page's products) become one statement
 * and one commit per batch instead of one each, with no timer: a lone item is written at once.
 *
 * `write` returns one result per item, in order (a result may itself be a promise, settled after
 * the next batch has started). A batch that fails is written again one item per statement, one
 * after another when Postgres refused it, so each item gets its own result or its own error (a bad
 * value, a deadlock with another statement, never hold back the rest of its batch); when Postgres
 * could not be reached, every item of the batch gets that error at once.
 */
export class GroupCommit<Item, Result> {
  private queue: Array<Waiting<Item, Result>> = [];
  private draining = false;

  constructor(
    private readonly write: (items: Item[]) => Promise<ReadonlyArray<Result | PromiseLike<Result>>>,
    private readonly options: GroupCommitOptions<Item> = {},
  ) {}

  submit(item: Item): Promise<Result> {
    return new Promise<Result>((resolve, reject) => {
      this.queue.push({ item, resolve, reject });
      if (!this.draining) {
        this.draining = true;
        // Items submitted in the same turn of the event loop go in the first statement too.
        setImmediate(() => void this.drain());
      }
    });
  }

  private async drain(): Promise<void> {
    try {
      while (this.queue.length > 0) await this.writeBatch(this.takeBatch());
    } finally {
      this.draining = false;
    }
  }

  private takeBatch(): Array<Waiting<Item, Result>> {
    const maxBatch = this.options.maxBatch ?? 64;
    const key = this.options.key;
    if (!key) return this.queue.splice(0, maxBatch);
    const batch: Array<Waiting<Item, Result>> = [];
    const rest: Array<Waiting<Item, Result>> = [];
    const keys = new Set<string>();
    for (const waiting of this.queue) {
      const itemKey = key(waiting.item);
      if (batch.length < maxBatch && !keys.has(itemKey)) {
        keys.add(itemKey);
        batch.push(waiting);
      } else rest.push(waiting);
    }
    this.queue = rest;
    return batch;
  }

  private async writeBatch(batch: Array<Waiting<Item, Result>>): Promise<void> {
    let results: ReadonlyArray<Result | PromiseLike<Result>>;
    try {
      results = await this.write(batch.map((waiting) => waiting.item));
    } catch (error) {
      if (batch.length === 1 || !(this.options.retryAlone ?? refusedByPostgres)(error))
        for (const waiting of batch) waiting.reject(error);
      else for (const waiting of batch) await this.writeBatch([waiting]);
      return;
    }
    if (results.length !== batch.length) {
      const error = new Error(
        `a group write returned ${results.length} results for ${batch.length} items`,
      );
      for (const waiting of batch) waiting.reject(error);
      return;
    }
    batch.forEach((waiting, i) => waiting.resolve(results[i] as Result | PromiseLike<Result>));
  }
}
