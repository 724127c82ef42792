import { sql } from 'kysely';
import type { Database } from './database.js';
import { prepared } from './prepared-statements.js';
import type { NewStep, Step } from './schema.js';

const STEP_INSERT_PAGE = 500;

/**
 * A step with its recorded time as ISO 8601 to the microsecond: a `Date` keeps milliseconds only,
 * and steps recorded within one millisecond (a rule agent's) are told apart by the rest.
 */
export type TimedStep = Step & { readonly at_iso: string };

const stepAt = (step: NewStep) =>
  step.at === undefined ? null : step.at instanceof Date ? step.at.toISOString() : step.at;

/**
 * `insert into steps …` for `steps`, one array parameter per column so its text never changes
 * (it is prepared). Idempotent: a step already written for this attempt is left as it is. A step
 * of an attempt that is no longer running (its run was cancelled, or the attempt was closed as
 * lost) is not written: a cancelled run gets no step after its cancel.
 */
export function insertStepsStatement(steps: readonly NewStep[]) {
  return sql`
    insert into steps (run_id, task_id, attempt, step, at, action, text, observation, reward, screenshot_uri, external_id, tokens_in, tokens_out, latency_ms, cost_usd)
    select s.run_id, s.task_id, s.attempt, s.step, coalesce(s.at, now()), s.action, s.text, s.observation, s.reward, s.screenshot_uri, s.external_id,
           coalesce(s.tokens_in, 0), coalesce(s.tokens_out, 0), s.latency_ms, s.cost_usd
    from unnest(
      ${steps.map((step) => step.run_id)}::text[], ${steps.map((step) => step.task_id)}::text[], ${steps.map((step) => step.attempt)}::int[],
      ${steps.map((step) => step.step)}::int[], ${steps.map(stepAt)}::timestamptz[], ${steps.map((step) => step.action ?? null)}::jsonb[],
      ${steps.map((step) => step.text ?? null)}::text[], ${steps.map((step) => step.observation ?? null)}::text[], ${steps.map((step) => step.reward ?? null)}::float8[],
      ${steps.map((step) => step.screenshot_uri ?? null)}::text[], ${steps.map((step) => step.external_id ?? null)}::text[],
      ${steps.map((step) => step.tokens_in ?? null)}::int[], ${steps.map((step) => step.tokens_out ?? null)}::int[], ${steps.map((step) => step.latency_ms ?? null)}::int[],
      ${steps.map((step) => step.cost_usd ?? null)}::float8[]
    ) as s(run_id, task_id, attempt, step, at, action, text, observation, reward, screenshot_uri, external_id, tokens_in, tokens_out, latency_ms, cost_usd)
    where exists (
      select 1 from attempts a
      where a.run_id = s.run_id and a.task_id = s.task_id and a.attempt = s.attempt and a.status = 'running'
    )
    on conflict (run_id, task_id, attempt, step) do nothing
  `;
}

/** The `steps` table: written in pages by `StepWriter` (or with an outcome), read per attempt. */
export class StepsRepository {
  constructor(private readonly db: Database) {}

  /** Writes steps (see `insertStepsStatement`), a page of them per statement. */
  async insertMany(steps: readonly NewStep[]): Promise<void> {
    for (let i = 0; i < steps.length; i += STEP_INSERT_PAGE) {
      const page = steps.slice(i, i + STEP_INSERT_PAGE);
      await sql`${prepared}${insertStepsStatement(page)}`.execute(this.db);
    }
  }

  /**
   * What the run's steps were priced at, over every attempt: the USD sum, the steps that used LLM
   * tokens, and those of them with no price (their cost is missing from the sum, never $0).
   */
  async pricedSpend(
    runId: string,
  ): Promise<{ usd: number; llmSteps: number; unpricedSteps: number }> {
    const { rows } = await sql<{ usd: number; llm_steps: number; unpriced_steps: number }>`
      select coalesce(sum(cost_usd), 0)::float8 as usd,
             count(*) filter (where tokens_in + tokens_out > 0)::int as llm_steps,
             count(*) filter (where tokens_in + tokens_out > 0 and cost_usd is null)::int as unpriced_steps
      from steps where run_id = ${runId}`.execute(this.db);
    const row = rows[0];
    return {
      usd: row?.usd ?? 0,
      llmSteps: row?.llm_steps ?? 0,
      unpricedSteps: row?.unpriced_steps ?? 0,
    };
  }

  /** The steps of one attempt of each of `tasks` (its final one, for an export), in task and step order. */
  async listOfAttempts(
    runId: string,
    tasks: readonly { taskId: string; attempt: number }[],
  ): Promise<TimedStep[]> {
    if (tasks.length === 0) return [];
    return this.db
      .selectFrom('steps')
      .selectAll()
      .select(
        sql<string>`to_char(at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`.as('at_iso'),
      )
      .where('run_id', '=', runId)
      .where((eb) =>
        eb.or(
          tasks.map((task) =>
            eb.and([eb('task_id', '=', task.taskId), eb('attempt', '=', task.attempt)]),
          ),
        ),
      )
      .orderBy('task_id')
      .orderBy('step')
      .execute();
  }

  /** Every step of a run, in task, attempt and step order. */
  async listByRun(runId: string): Promise<Step[]> {
    return this.db
      .selectFrom('steps')
      .selectAll()
      .where('run_id', '=', runId)
      .orderBy('task_id')
      .orderBy('attempt')
      .orderBy('step')
      .execute();
  }

  /** The steps of a task (of one attempt, or of all), in attempt and step order. */
  async listByTask(runId: string, taskId: string, attempt?: number): Promise<Step[]> {
    let query = this.db
      .selectFrom('steps')
      .selectAll()
      .where('run_id', '=', runId)
      .where('task_id', '=', taskId);
    if (attempt !== undefined) query = query.where('attempt', '=', attempt);
    return query.orderBy('attempt').orderBy('step').execute();
  }
}

/** What `StepWriter` needs of a repository: somewhere to write its batches. */
export type StepSink = Pick<StepsRepository, 'insertMany'>;

/**
 * Collects steps from many concurrent episodes and writes them in batches: one INSERT per write
 * instead of one per step. `flush()` resolves once every step added before it is in Postgres, so
 * the steps of a finished task are always there before its result. A flush writes at once
 * whatever is pending (other episodes' steps too) without waiting for writes already under way,
 * so a finishing episode waits for one INSERT at most; steps nobody flushes go within `maxDelayMs`.
 */
export class StepWriter {
  private pending: NewStep[] = [];
  private readonly writing = new Set<Promise<unknown>>();
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly repository: StepSink,
    private readonly options: { maxBatch?: number; maxDelayMs?: number } = {},
  ) {}

  add(step: NewStep): void {
    this.pending.push(step);
    if (this.pending.length >= (this.options.maxBatch ?? 200))
      void this.write().catch(() => undefined);
    else
      this.timer ??= setTimeout(
        () => void this.write().catch(() => undefined),
        this.options.maxDelayMs ?? 25,
      );
  }

  /** Resolves once everything added so far is written; rejects if that write failed (the steps stay pending). */
  async flush(): Promise<void> {
    // Steps added earlier may be in writes under way: those must end too.
    const underWay = [...this.writing];
    await Promise.all([this.write(), ...underWay]);
  }

  /**
   * Like `flush`, but the steps still pending are handed to `write`, which writes them in a
   * statement of its own (a task's outcome and its last steps in one round trip). It runs once
   * the writes already under way have ended, and not if one of them failed; when it fails, its
   * steps are pending again. Flushes after it wait for it.
   */
  flushWith<T>(write: (batch: readonly NewStep[]) => Promise<T>): Promise<T> {
    const underWay = [...this.writing];
    const batch = this.takePending();
    const written = Promise.all(underWay)
      .then(() => write(batch))
      .catch((error: unknown) => {
        this.pending = batch.concat(this.pending);
        throw error;
      });
    this.track(written);
    return written;
  }

  private takePending(): NewStep[] {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
    const batch = this.pending;
    this.pending = [];
    return batch;
  }

  /** Keeps a write in `writing` until it ends; its failure is reported to whoever awaits it. */
  private track(write: Promise<unknown>): void {
    this.writing.add(write);
    const forget = (): void => void this.writing.delete(write);
    write.then(forget, forget);
  }

  private write(): Promise<void> {
    const batch = this.takePending();
    if (batch.length === 0) return Promise.resolve();
    const write = this.repository.insertMany(batch).catch((error: unknown) => {
      this.pending = batch.concat(this.pending);
      throw error;
    });
    this.track(write);
    return write;
  }
}
