import { createHash } from 'node:crypto';
import { promisify } from 'node:util';
import { gzip } from 'node:zlib';
import type { Context } from 'hono';
import { defineQuery, runNamedQuery, type Database } from '@benchfleet/db';

const gzipAsync = promisify(gzip);

/**
 * What moves when a task of any of the runs starts, settles, is resumed or cancelled: per run, its
 * task count, running and settled counts and last start and end (as the run's own cursor).
 */
export const runsCursorQuery = defineQuery({
  name: 'runs_cursor',
  title: 'What changes when a task of the runs starts or settles',
  params: ['runs'],
  sql: `
select coalesce(json_agg(json_build_array(run_id, tasks, running, settled, last_start, last_finish) order by run_id), '[]')::text as cursor
from (
  select t.run_id, count(*) as tasks,
         count(*) filter (where t.status = 'running') as running,
         count(*) filter (where t.status in ('success', 'failed', 'cancelled', 'error')) as settled,
         max(t.started_at) as last_start, max(t.finished_at) as last_finish
  from tasks t
  where t.run_id in (select jsonb_array_elements_text(:runs::jsonb))
  group by t.run_id
) per_run`,
});

interface KeptAnswer {
  cursor: string;
  etag: string;
  json: string;
  gzipped: Buffer;
}

/**
 * Answers that aggregate whole runs (the grid over 60,000 cells, a run's phases), kept as JSON and
 * gzip for as long as their runs' cursor stays where it was; the newest `size` are kept.
 */
export class KeptAnswers {
  private readonly kept = new Map<string, KeptAnswer>();

  constructor(
    private readonly db: Database,
    private readonly size: number,
  ) {}

  /** The runs' cursor: JSON text that changes when a task of theirs starts or settles. */
  async cursorOf(runIds: readonly string[]): Promise<{ cursor: string }> {
    const [row] = await runNamedQuery<{ cursor: string }, 'runs'>(this.db, runsCursorQuery, {
      runs: JSON.stringify(runIds),
    });
    return { cursor: row?.cursor ?? '[]' };
  }

  /** The kept answer under `key` while `cursor` has not moved, else `build`'s, kept. */
  async answer(c: Context, key: string, cursor: string, build: () => Promise<string>) {
    let answer = this.kept.get(key);
    if (answer?.cursor !== cursor) {
      const json = await build();
      answer = {
        cursor,
        etag: `"${createHash('sha1').update(key).update(cursor).digest('hex')}"`,
        json,
        gzipped: await gzipAsync(json),
      };
      this.kept.delete(key);
      this.kept.set(key, answer);
      if (this.kept.size > this.size) this.kept.delete(this.kept.keys().next().value ?? '');
    }
    c.header('ETag', answer.etag);
    c.header('Cache-Control', 'no-cache');
    if (c.req.header('if-none-match') === answer.etag) return c.body(null, 304);
    c.header('Content-Type', 'application/json; charset=UTF-8');
    c.header('Vary', 'Accept-Encoding');
    if (/\bgzip\b/.test(c.req.header('accept-encoding') ?? '')) {
      c.header('Content-Encoding', 'gzip');
      return c.body(new Uint8Array(answer.gzipped));
    }
    return c.body(answer.json);
  }
}
