import { createHash } from 'node:crypto';
import { promisify } from 'node:util';
import { gzip } from 'node:zlib';
import type { Context } from 'hono';
import { sql } from 'kysely';
import { runNamedQuery, type Database } from '@benchfleet/db';
import type { ShownQuery } from '../shared/shown-query.js';
import type { TasksResponse } from '../shared/view-rows.js';
import type { BenchmarkViews } from './benchmark-views.js';
import { NotFound } from './http-policy.js';
import { runBenchmarkQuery } from './run-queries.js';
import { requireRun } from './run-view.js';
import { shown } from './shown-sql.js';

const gzipAsync = promisify(gzip);

interface KeptList {
  cursor: string;
  etag: string;
  json: string;
  gzipped: Buffer;
}

const TASK_LISTS_KEPT = 8;

// Overlap by a few seconds: a task's row may commit after a moment later than its timestamps.
const SINCE_OVERLAP_MS = 10_000;

/** The answer as JSON text: the rows arrive as JSON text from Postgres and go out as they are. */
function taskListJson(
  asOf: Date | undefined,
  columns: TasksResponse['columns'],
  query: ShownQuery,
  rowsJson: string | undefined,
) {
  const head: Omit<TasksResponse, 'rows'> = { as_of: asOf, columns, query };
  return `${JSON.stringify(head).slice(0, -1)},"rows":${rowsJson ?? '[]'}}`;
}

function send(c: Context, list: KeptList): Response {
  c.header('ETag', list.etag);
  c.header('Cache-Control', 'no-cache');
  if (c.req.header('if-none-match') === list.etag) return c.body(null, 304);
  c.header('Content-Type', 'application/json; charset=UTF-8');
  c.header('Vary', 'Accept-Encoding');
  if (/\bgzip\b/.test(c.req.header('accept-encoding') ?? '')) {
    c.header('Content-Encoding', 'gzip');
    return c.body(new Uint8Array(list.gzipped));
  }
  return c.body(list.json);
}

/**
 * A run's task list. The full list of a 20,000-task run is ~2 MB of JSON: kept, gzipped, per run
 * for as long as the run's cursor (what starts or settles a task moves it) stays where it was.
 */
export class TaskListCache {
  private readonly lists = new Map<string, KeptList>();

  constructor(
    private readonly db: Database,
    private readonly benchmarks: BenchmarkViews,
  ) {}

  private async asOf(): Promise<Date | undefined> {
    return (await sql<{ as_of: Date }>`select now() as as_of`.execute(this.db)).rows[0]?.as_of;
  }

  /** Every task of the run, from the kept copy while the run's cursor has not moved. */
  async all(c: Context, runId: string): Promise<Response> {
    const asOf = await this.asOf();
    const { benchmark } = await requireRun(this.db, runId);
    const [cursorRow] = await runNamedQuery<Record<string, unknown>, 'run'>(
      this.db,
      this.benchmarks.queriesOf(benchmark).cursor,
      { run: runId },
    );
    const cursor = JSON.stringify(cursorRow ?? {});
    const kept = this.lists.get(runId);
    if (kept?.cursor === cursor) return send(c, kept);
    const lists = this.benchmarks.taskList(benchmark);
    const [all] = await runNamedQuery<{ rows: string }, 'run'>(this.db, lists.all, { run: runId });
    const json = taskListJson(asOf, lists.columns, shown(lists.all, { run: runId }), all?.rows);
    const list = {
      cursor,
      etag: `"${createHash('sha1').update(runId).update(cursor).digest('hex')}"`,
      json,
      gzipped: await gzipAsync(json),
    };
    this.lists.delete(runId);
    this.lists.set(runId, list);
    if (this.lists.size > TASK_LISTS_KEPT) this.lists.delete(this.lists.keys().next().value ?? '');
    return send(c, list);
  }

  /** The tasks that started or settled since a moment (`?since=`), never kept. */
  async changedSince(c: Context, runId: string, since: string): Promise<Response> {
    const asOf = await this.asOf();
    const sinceDate = new Date(since);
    if (Number.isNaN(sinceDate.getTime()))
      return c.json({ error: `since=${since} is not a timestamp` }, 400);
    const values = {
      run: runId,
      since: new Date(sinceDate.getTime() - SINCE_OVERLAP_MS).toISOString(),
    };
    const [run] = await runNamedQuery<{ benchmark: string }, 'run'>(this.db, runBenchmarkQuery, {
      run: runId,
    });
    if (!run) throw new NotFound(`run ${runId} not found`);
    const lists = this.benchmarks.taskList(run.benchmark);
    const [changed] = await runNamedQuery<{ rows: string }, 'run' | 'since'>(
      this.db,
      lists.changed,
      values,
    );
    c.header('Content-Type', 'application/json; charset=UTF-8');
    return c.body(taskListJson(asOf, lists.columns, shown(lists.changed, values), changed?.rows));
  }
}
