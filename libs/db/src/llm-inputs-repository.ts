import { sql } from 'kysely';
import type { Database } from './database.js';
import { imageRefsOf, restoreImages, type SplitModelCall } from './model-input.js';
import type { LlmCallRow, LlmInputBlobRow } from './schema.js';

/** What a run's stored inputs take: rows and bytes of `llm_input_blobs`, and calls. */
export interface StoredInputSize {
  readonly calls: number;
  readonly blobs: number;
  readonly bytes: number;
}

/**
 * The `llm_calls` and `llm_input_blobs` tables: a call's input written once, by content. Blobs
 * already stored for the run are left as they are (`on conflict do nothing`: equal digest, equal
 * content), so concurrent writers of one run never wait on each other's rows for long; a call
 * written twice (a retried write) changes nothing.
 */
export class LlmInputsRepository {
  constructor(private readonly db: Database) {}

  /**
   * Writes every blob the calls name, then the calls: each statement on its own, never inside a
   * transaction. A worker cut off between two statements of a transaction would leave its
   * uncommitted blob rows held (and other workers' inserts of the same digests waiting on them)
   * until Postgres ends its session; here a call is written only once every blob it names is, and a
   * write cut short leaves at most blobs no call names yet, which the retried write (or the run's
   * deletion) settles.
   */
  async insertCalls(calls: readonly SplitModelCall[]): Promise<void> {
    if (calls.length === 0) return;
    const blobs = new Map<string, { runId: string; blob: SplitModelCall['blobs'][number] }>();
    for (const split of calls)
      for (const blob of split.blobs)
        blobs.set(`${split.call.owner.runId}\u0000${blob.digest}`, {
          runId: split.call.owner.runId,
          blob,
        });
    // Sorted: two writers inserting the same blobs take their locks in the same order.
    const rows = [...blobs.entries()].sort(([a], [b]) => (a < b ? -1 : 1)).map(([, row]) => row);
    for (let i = 0; i < rows.length; i += 200) {
      const page = rows.slice(i, i + 200);
      await this.db
        .insertInto('llm_input_blobs')
        .values(
          page.map(({ runId, blob }) => ({
            run_id: runId,
            digest: blob.digest,
            kind: blob.kind,
            body: blob.body,
            data: blob.data,
            media_type: blob.mediaType,
            bytes: blob.bytes,
          })),
        )
        .onConflict((oc) => oc.columns(['run_id', 'digest']).doNothing())
        .execute();
    }
    await this.db
      .insertInto('llm_calls')
      .values(
        calls.map((split) => ({
          run_id: split.call.owner.runId,
          task_id: split.call.owner.taskId,
          attempt: split.call.owner.attempt,
          call_no: split.call.callNo,
          step: split.call.step,
          at: split.call.at,
          model: split.call.model,
          message_digests: [...split.messageDigests],
          tools_digest: split.toolsDigest,
          parameters: JSON.stringify(split.parameters),
          tokens_in: split.call.tokensIn ?? null,
          tokens_out: split.call.tokensOut ?? null,
        })),
      )
      .onConflict((oc) => oc.columns(['run_id', 'task_id', 'attempt', 'call_no']).doNothing())
      .execute();
  }

  /** A task's calls (every attempt, or one), in attempt and call order. */
  async callsOfTask(runId: string, taskId: string, attempt?: number): Promise<LlmCallRow[]> {
    let query = this.db
      .selectFrom('llm_calls')
      .selectAll()
      .where('run_id', '=', runId)
      .where('task_id', '=', taskId);
    if (attempt !== undefined) query = query.where('attempt', '=', attempt);
    return query.orderBy('attempt').orderBy('call_no').execute();
  }

  /** The calls of these tasks of a run, in task, attempt and call order. */
  async callsOfTasks(runId: string, taskIds: readonly string[]): Promise<LlmCallRow[]> {
    if (taskIds.length === 0) return [];
    return this.db
      .selectFrom('llm_calls')
      .selectAll()
      .where('run_id', '=', runId)
      .where('task_id', '=', sql<string>`any(${[...taskIds]}::text[])`)
      .orderBy('task_id')
      .orderBy('attempt')
      .orderBy('call_no')
      .execute();
  }

  /** Every call of a run, in task, attempt and call order. */
  async callsOfRun(runId: string): Promise<LlmCallRow[]> {
    return this.db
      .selectFrom('llm_calls')
      .selectAll()
      .where('run_id', '=', runId)
      .orderBy('task_id')
      .orderBy('attempt')
      .orderBy('call_no')
      .execute();
  }

  /** The blobs of a run with these digests (any order). */
  async blobs(runId: string, digests: readonly string[]): Promise<LlmInputBlobRow[]> {
    if (digests.length === 0) return [];
    return this.db
      .selectFrom('llm_input_blobs')
      .selectAll()
      .where('run_id', '=', runId)
      .where('digest', '=', sql<string>`any(${[...new Set(digests)]}::text[])`)
      .execute();
  }

  /** A call's input whole, as it was sent: its messages (images as data URLs again) and tools. */
  async inputOf(
    call: Pick<LlmCallRow, 'run_id' | 'message_digests' | 'tools_digest'>,
  ): Promise<{ messages: unknown[]; tools: unknown }> {
    const digests = [...call.message_digests, ...(call.tools_digest ? [call.tools_digest] : [])];
    const blobs = new Map(
      (await this.blobs(call.run_id, digests)).map((blob) => [blob.digest, blob.body]),
    );
    const refs = imageRefsOf([...blobs.values()]);
    const images = new Map(
      (await this.blobs(call.run_id, [...refs])).map((blob) => [
        blob.digest,
        `data:${blob.media_type};base64,${blob.data?.toString('base64') ?? ''}`,
      ]),
    );
    return {
      messages: call.message_digests.map((digest) => restoreImages(blobs.get(digest), images)),
      tools: call.tools_digest === null ? null : (blobs.get(call.tools_digest) ?? null),
    };
  }

  /** How much a run's inputs take. */
  async storedSize(runId: string): Promise<StoredInputSize> {
    const row = await sql<{ calls: string; blobs: string; bytes: string }>`
      select (select count(*) from llm_calls where run_id = ${runId}) as calls,
             count(*) as blobs, coalesce(sum(bytes), 0) as bytes
      from llm_input_blobs where run_id = ${runId}`.execute(this.db);
    const size = row.rows[0];
    return {
      calls: Number(size?.calls ?? 0),
      blobs: Number(size?.blobs ?? 0),
      bytes: Number(size?.bytes ?? 0),
    };
  }
}
