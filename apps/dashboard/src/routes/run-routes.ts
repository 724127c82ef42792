import { Hono } from 'hono';
import { streamSSE, type SSEStreamingApi } from 'hono/streaming';
import { runNamedQuery, type Database, type NamedQuery } from '@benchfleet/db';
import type {
  DomainRow,
  DurationBinRow,
  FailureRow,
  PanelRows,
  PanelsResponse,
  SearchResponse,
  StepsBinRow,
} from '../../shared/view-rows.js';
import type { BenchmarkViews } from '../benchmark-views.js';
import type { DashboardContext } from '../dashboard-context.js';
import type { RunFeed } from '../run-feed.js';
import {
  durationDistributionQuery,
  stepsDistributionQuery,
  taskSearchQuery,
} from '../run-queries.js';
import { loadRunResponse, requireRun } from '../run-view.js';
import { shown } from '../shown-sql.js';
import { TaskListCache } from '../task-list-cache.js';

const KEEP_ALIVE_MS = 15_000;

async function panel<R>(
  db: Database,
  query: NamedQuery<'run'>,
  run: string,
): Promise<PanelRows<R>> {
  const values = { run };
  return { rows: await runNamedQuery<R, 'run'>(db, query, values), query: shown(query, values) };
}

/** The run page's panels below its head: failures (by the benchmark's own reason), domains, steps, durations. */
async function loadPanels(
  db: Database,
  benchmarks: BenchmarkViews,
  runId: string,
): Promise<PanelsResponse> {
  const run = await requireRun(db, runId);
  const [domains, failures, steps, durations] = await Promise.all([
    panel<DomainRow>(db, benchmarks.queriesOf(run.benchmark).domains, runId),
    panel<FailureRow>(db, benchmarks.failuresQuery(run.benchmark), runId),
    panel<StepsBinRow>(db, stepsDistributionQuery, runId),
    panel<DurationBinRow>(db, durationDistributionQuery, runId),
  ]);
  return { domains, failures, steps, durations };
}

/** Server-sent events: one per move of the run's cursor, a comment every 15 s to keep proxies open. */
async function runEvents(feed: RunFeed, runId: string, stream: SSEStreamingApi): Promise<void> {
  let wake: () => void = () => undefined;
  const queue: string[] = [];
  const unsubscribe = feed.subscribe(runId, (event) => {
    queue.push(JSON.stringify(event));
    wake();
  });
  stream.onAbort(() => {
    unsubscribe();
    wake();
  });
  try {
    while (!stream.aborted && !stream.closed) {
      const next = queue.shift();
      if (next !== undefined) {
        await stream.writeSSE({ event: 'run', data: next });
        continue;
      }
      await new Promise<void>((resolve) => {
        wake = resolve;
        setTimeout(resolve, KEEP_ALIVE_MS).unref();
      });
      if (queue.length === 0 && !stream.aborted) await stream.write(': keep-alive\n\n');
    }
  } finally {
    unsubscribe();
  }
}

/** One run: its head, its panels, its task list and its live events. */
export function runRoutes({
  db,
  benchmarks,
  feed,
}: Pick<DashboardContext, 'db' | 'benchmarks' | 'feed'>): Hono {
  const taskLists = new TaskListCache(db, benchmarks);
  const routes = new Hono();
  routes.get('/api/runs/:run', async (c) =>
    c.json(await loadRunResponse(db, benchmarks, c.req.param('run'))),
  );
  routes.get('/api/runs/:run/panels', async (c) =>
    c.json(await loadPanels(db, benchmarks, c.req.param('run'))),
  );
  routes.get('/api/runs/:run/tasks', async (c) => {
    const since = c.req.query('since');
    return since === undefined
      ? taskLists.all(c, c.req.param('run'))
      : taskLists.changedSince(c, c.req.param('run'), since);
  });
  // Full-text search over the run's instructions, answers and errors (the task table's search).
  routes.get('/api/runs/:run/search', async (c) => {
    const values = { run: c.req.param('run'), q: c.req.query('q') ?? '' };
    const [row] = await runNamedQuery<{ task_ids: string }, 'run' | 'q'>(
      db,
      taskSearchQuery,
      values,
    );
    return c.json({
      task_ids: JSON.parse(row?.task_ids ?? '[]') as string[],
      query: shown(taskSearchQuery, values),
    } satisfies SearchResponse);
  });
  routes.get('/api/runs/:run/events', (c) =>
    streamSSE(c, (stream) => runEvents(feed, c.req.param('run'), stream)),
  );
  return routes;
}
