import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import type { Server } from 'node:http';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { gzip } from 'node:zlib';
import { createBullBoard } from '@bull-board/api';
import { BullMQAdapter } from '@bull-board/api/bullMQAdapter';
import { HonoAdapter } from '@bull-board/hono';
import { createAdaptorServer } from '@hono/node-server';
import { serveStatic } from '@hono/node-server/serve-static';
import { Hono, type Context } from 'hono';
import { compress } from 'hono/compress';
import { sql } from 'kysely';
import { streamSSE } from 'hono/streaming';
import type { ArtifactStore } from '@benchfleet/artifacts';
import { listenOn, type Logger } from '@benchfleet/core';
import {
  inlineNamedQuery,
  psqlVariableFlags,
  runNamedQuery,
  type Database,
  type NamedQuery,
  type QueryValues,
} from '@benchfleet/db';
import {
  comparisonCoverageQuery,
  loadRunComparison,
  pairedTasksQuery,
} from '@benchfleet/run-comparison';
import { accessGuard } from './access-guard.js';
import {
  benchmarkDisplay,
  setBenchmarkDisplays,
  type BenchmarkDisplay,
} from './benchmark-display.js';
import type { BenchmarkRegistry } from '@benchfleet/benchmark-kit';
import { AGGREGATE_QUEUE } from '@benchfleet/queue';
import {
  attemptsQuery,
  changedTasksQuery,
  domainsQuery,
  durationDistributionQuery,
  failuresQueryFor,
  runCursorQuery,
  runQuery,
  runsListQuery,
  screenshotQuery,
  stepsDistributionQuery,
  stepsQuery,
  taskQuery,
  tasksQuery,
  TASK_COLUMNS,
  webshopGoalQuery,
} from './dashboard-queries.js';
import { FleetObserver } from './fleet-view.js';
import { RunFeed } from './run-feed.js';
import { runFirstPaintHtml, type FirstPaintRun } from './run-first-paint.js';
import { ScreenshotReader } from './screenshot-reader.js';
import { actionFrame, screenshotPath, selectedStep, type StepRef } from './trajectory-frame.js';
import type { ShownQuery } from './shown-query.js';
import { WEB_DIST_DIR } from './web-build.js';

export interface DashboardServerOptions {
  db: Database;
  /** The benchmarks of this fleet: labels, queues and how to show their trajectories. */
  registry: BenchmarkRegistry;
  redisUrl: string;
  prefix: string;
  artifacts: ArtifactStore;
  logger: Logger;
  authToken?: string;
  pollMs: number;
}

/** What the browser shows of each benchmark, from the registry (it never sees the registry itself). */
function displaysOf(registry: BenchmarkRegistry): Record<string, BenchmarkDisplay> {
  return Object.fromEntries(
    registry.all.map((benchmark) => [
      benchmark.name,
      {
        successLabel: benchmark.success.label,
        successExplanation: `${benchmark.title} success: ${benchmark.success.meaning}.`,
        trajectoryView:
          benchmark.display.trajectory === 'screenshots' ? 'screenshots' : 'webshop-pages',
        queue: benchmark.job.queue,
        workerCommand: benchmark.display.workerCommand,
        stopReasons: { ...benchmark.display.stopReasons },
        finalStatuses: { ...benchmark.display.finalStatuses },
        failureReasonLabel: benchmark.display.failureReason?.label ?? null,
      } satisfies BenchmarkDisplay,
    ]),
  );
}

function shown<P extends string>(query: NamedQuery<P>, values: QueryValues<P>): ShownQuery {
  return {
    name: query.name,
    title: query.title,
    psql: inlineNamedQuery(query, values),
    variables: query.sql.trim(),
    flags: psqlVariableFlags(query, values),
  };
}

class NotFound extends Error {}

const gzipAsync = promisify(gzip);

// A SQLSTATE outside the connection classes is a query fault; anything else (refused, reset,
// timed out, shutting down) means the database is not there.
function isDatabaseDown(error: unknown): boolean {
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code))
    return code.startsWith('08') || code.startsWith('57P') || code === '53300';
  return true;
}

const SECURITY_HEADERS: Record<string, string> = {
  'Content-Security-Policy':
    "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data: blob:; connect-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'; form-action 'self'",
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'no-referrer',
  'X-Frame-Options': 'DENY',
};

// bull-board's page: its own scripts and styles, and nothing from elsewhere (it links a web font).
const QUEUE_VIEW_CSP =
  "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; font-src 'self'; connect-src 'self'; object-src 'none'; base-uri 'self'; frame-ancestors 'none'";

/** The queue view's way back: outside bull-board's own markup, so its app cannot replace it. */
const BACK_TO_DASHBOARD =
  '<a href="/" data-link="back-to-benchfleet" style="position:fixed;right:16px;bottom:16px;z-index:10000;padding:6px 12px;border-radius:4px;background:#1f5f99;color:#fff;font:14px/1.4 system-ui,sans-serif;text-decoration:none;box-shadow:0 1px 4px rgba(0,0,0,.3)">← benchfleet runs</a>';

const STEP_ROUTE = '/api/runs/:run/tasks/:task/attempts/:attempt/steps/:step/screenshot';

export interface DashboardServer {
  server: Server;
  port: number;
  url: string;
  close(): Promise<void>;
}

/** The dashboard's HTTP app: JSON API, live events, screenshots, the queue view and the built front end. */
export function createDashboardApp(options: DashboardServerOptions): {
  app: Hono;
  close(): Promise<void>;
} {
  const { db, logger } = options;
  const displays = displaysOf(options.registry);
  setBenchmarkDisplays(displays);
  const fleet = new FleetObserver(options.redisUrl, options.prefix, [
    ...options.registry.taskQueues,
    AGGREGATE_QUEUE,
  ]);
  const feed = new RunFeed(db, options.pollMs, logger.child({ part: 'run-feed' }));
  // Each benchmark groups its failures by its own reason, where it gives one.
  const failuresQueries = new Map(
    options.registry.all.map((benchmark) => [
      benchmark.name,
      failuresQueryFor(benchmark.display.failureReason?.sql),
    ]),
  );
  const plainFailuresQuery = failuresQueryFor(undefined);
  const screenshots = new ScreenshotReader(options.artifacts);
  const app = new Hono();

  app.onError((error, c) => {
    if (error instanceof NotFound) return c.json({ error: error.message }, 404);
    if (isDatabaseDown(error))
      return c.json(
        { error: 'database unavailable: Postgres does not answer; this page retries by itself' },
        503,
      );
    logger.error({ err: error, path: c.req.path }, 'request failed');
    return c.json({ error: 'internal error; the server log has the details' }, 500);
  });

  app.use('*', accessGuard(options.authToken));
  app.use('*', async (c, next) => {
    await next();
    for (const [name, value] of Object.entries(SECURITY_HEADERS)) c.header(name, value);
    if (c.req.path.startsWith('/queues')) c.header('Content-Security-Policy', QUEUE_VIEW_CSP);
  });
  const compressJson = compress();
  // Not the event stream (it must flush as it goes), images, or the task list (gzipped once, kept).
  app.use('/api/*', (c, next) =>
    /\/(events|screenshot|tasks)$/.test(c.req.path) ? next() : compressJson(c, next),
  );

  const rows = <R, P extends string>(query: NamedQuery<P>, values: QueryValues<P>) =>
    runNamedQuery<R, P>(db, query, values);

  app.get('/api/health', async (c) => {
    const [database, redis] = await Promise.all([
      sql`select 1`.execute(db).then(
        () => 'up' as const,
        () => 'down' as const,
      ),
      fleet.ping().then((up) => (up ? ('up' as const) : ('down' as const))),
    ]);
    return c.json({ database, redis });
  });

  app.get('/api/benchmarks', (c) => c.json(displays));

  app.get('/api/runs', async (c) => {
    const runs = await rows<Record<string, unknown>, never>(runsListQuery, {});
    return c.json({ runs, queries: [shown(runsListQuery, {})] });
  });

  const requireRun = async (runId: string) => {
    const [run] = await rows<
      Record<string, unknown> & {
        total: number;
        queued: number;
        running: number;
        started_at: Date | null;
        as_of: Date;
      },
      'run'
    >(runQuery, { run: runId });
    if (!run) throw new NotFound(`run ${runId} not found`);
    return run;
  };

  const runResponse = async (runId: string) => {
    const run = await requireRun(runId);
    const done = run.total - run.queued - run.running;
    let etaSeconds: number | null = null;
    if (run.started_at && done > 0 && done < run.total) {
      const elapsed = (run.as_of.getTime() - run.started_at.getTime()) / 1000;
      etaSeconds = Math.round((run.total - done) / (done / Math.max(elapsed, 0.001)));
    }
    return {
      run,
      done,
      eta_seconds: etaSeconds,
      provisional: run['summarised'] !== true,
      queries: [shown(runQuery, { run: runId })],
    };
  };

  app.get('/api/runs/:run', async (c) => c.json(await runResponse(c.req.param('run'))));

  app.get('/api/runs/:run/panels', async (c) => {
    const values = { run: c.req.param('run') };
    const run = await requireRun(values.run);
    const failuresQuery = failuresQueries.get(String(run['benchmark'])) ?? plainFailuresQuery;
    const [domains, failures, steps, durations] = await Promise.all([
      rows(domainsQuery, values),
      rows(failuresQuery, values),
      rows(stepsDistributionQuery, values),
      rows(durationDistributionQuery, values),
    ]);
    return c.json({
      domains: { rows: domains, query: shown(domainsQuery, values) },
      failures: { rows: failures, query: shown(failuresQuery, values) },
      steps: { rows: steps, query: shown(stepsDistributionQuery, values) },
      durations: { rows: durations, query: shown(durationDistributionQuery, values) },
    });
  });

  // The full task list of a 20,000-task run is ~2 MB of JSON: kept, gzipped, per run for as long
  // as the run's cursor (what starts or settles a task moves it) stays where it was.
  const taskLists = new Map<
    string,
    { cursor: string; etag: string; json: string; gzipped: Buffer }
  >();
  const TASK_LISTS_KEPT = 8;

  const sendTaskList = (c: Context, list: { etag: string; json: string; gzipped: Buffer }) => {
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
  };

  const taskListJson = (asOf: Date | undefined, query: ShownQuery, rowsJson: string | undefined) =>
    // The rows arrive as JSON text from Postgres and go out as they are.
    `${JSON.stringify({ as_of: asOf, columns: TASK_COLUMNS, query }).slice(0, -1)},"rows":${rowsJson ?? '[]'}}`;

  app.get('/api/runs/:run/tasks', async (c) => {
    const runId = c.req.param('run');
    const since = c.req.query('since');
    const asOf = (await sql<{ as_of: Date }>`select now() as as_of`.execute(db)).rows[0]?.as_of;
    if (since !== undefined) {
      const sinceDate = new Date(since);
      if (Number.isNaN(sinceDate.getTime()))
        return c.json({ error: `since=${since} is not a timestamp` }, 400);
      // Overlap by a few seconds: a task's row may commit after a moment later than its timestamps.
      const values = { run: runId, since: new Date(sinceDate.getTime() - 10_000).toISOString() };
      const [changed] = await rows<{ rows: string }, 'run' | 'since'>(changedTasksQuery, values);
      c.header('Content-Type', 'application/json; charset=UTF-8');
      return c.body(taskListJson(asOf, shown(changedTasksQuery, values), changed?.rows));
    }
    await requireRun(runId);
    const [cursorRow] = await rows<Record<string, unknown>, 'run'>(runCursorQuery, { run: runId });
    const cursor = JSON.stringify(cursorRow ?? {});
    const kept = taskLists.get(runId);
    if (kept?.cursor === cursor) return sendTaskList(c, kept);
    const [all] = await rows<{ rows: string }, 'run'>(tasksQuery, { run: runId });
    const json = taskListJson(asOf, shown(tasksQuery, { run: runId }), all?.rows);
    const list = {
      cursor,
      etag: `"${createHash('sha1').update(runId).update(cursor).digest('hex')}"`,
      json,
      gzipped: await gzipAsync(json),
    };
    taskLists.delete(runId);
    taskLists.set(runId, list);
    if (taskLists.size > TASK_LISTS_KEPT) taskLists.delete(taskLists.keys().next().value ?? '');
    return sendTaskList(c, list);
  });

  app.get('/api/runs/:run/fleet', async (c) => {
    const run = await requireRun(c.req.param('run'));
    const display = benchmarkDisplay(String(run['benchmark']));
    const view = await fleet.view(display.queue, c.req.param('run'));
    const pending = run.queued + run.running;
    return c.json({
      ...view,
      pending,
      worker_command: display.workerCommand,
    });
  });

  app.get('/api/runs/:run/events', (c) => {
    const runId = c.req.param('run');
    return streamSSE(c, async (stream) => {
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
            setTimeout(resolve, 15_000).unref();
          });
          if (queue.length === 0 && !stream.aborted) await stream.write(': keep-alive\n\n');
        }
      } finally {
        unsubscribe();
      }
    });
  });

  const taskDetail = async (values: { run: string; task: string }) => {
    const [task] = await rows<Record<string, unknown> & { benchmark: string }, 'run' | 'task'>(
      taskQuery,
      values,
    );
    if (!task) throw new NotFound(`task ${values.task} of run ${values.run} not found`);
    const [attempts, steps, [goal]] = await Promise.all([
      rows<{ attempt: number }, 'run' | 'task'>(attemptsQuery, values),
      rows<StepRef, 'run' | 'task'>(stepsQuery, values),
      rows(webshopGoalQuery, values),
    ]);
    const queries = [taskQuery, attemptsQuery, stepsQuery, ...(goal ? [webshopGoalQuery] : [])].map(
      (query) => shown(query, values),
    );
    return { task, attempts, steps, goal: goal ?? null, queries };
  };

  app.get('/api/runs/:run/tasks/:task', async (c) =>
    c.json(await taskDetail({ run: c.req.param('run'), task: c.req.param('task') })),
  );

  app.get(STEP_ROUTE, async (c) => {
    const attempt = Number(c.req.param('attempt'));
    const step = Number(c.req.param('step'));
    if (!Number.isInteger(attempt) || !Number.isInteger(step))
      return c.json({ error: 'attempt and step are whole numbers' }, 404);
    const [row] = await rows<
      { screenshot_uri: string | null },
      'run' | 'task' | 'attempt' | 'step'
    >(screenshotQuery, {
      run: c.req.param('run'),
      task: c.req.param('task'),
      attempt,
      step,
    });
    const image = row?.screenshot_uri ? await screenshots.read(row.screenshot_uri) : undefined;
    if (!image) return c.json({ error: 'no screenshot in the artifact store for this step' }, 404);
    c.header('Cache-Control', 'private, max-age=31536000, immutable');
    c.header('Content-Type', image.contentType);
    return c.body(new Uint8Array(image.bytes));
  });

  app.get('/api/compare', async (c) => {
    const a = c.req.query('a') ?? '';
    const b = c.req.query('b') ?? '';
    const { comparison, coverage } = await loadRunComparison(db, a, b);
    for (const id of [a, b])
      if (!coverage.some((run) => run.run_id === id))
        throw new NotFound(`run ${id || '(none)'} not found`);
    const values = { run_a: a, run_b: b };
    return c.json({
      comparison,
      coverage,
      queries: [shown(pairedTasksQuery, values), shown(comparisonCoverageQuery, values)],
    });
  });

  app.all('/api/*', (c) => c.json({ error: `no such API: ${c.req.path}` }, 404));

  // The queue view: bull-board over the same queues, read-only.
  const board = new HonoAdapter(serveStatic);
  createBullBoard({
    queues: [...fleet.queues.values()].map(
      (queue) => new BullMQAdapter(queue, { readOnlyMode: true }),
    ),
    serverAdapter: board,
    options: { uiConfig: { boardTitle: 'benchfleet queues' } },
  });
  board.setBasePath('/queues');
  // Nothing is fetched from the internet at run time: drop the web-font link from its page.
  app.use('/queues/*', async (c, next) => {
    await next();
    if (!(c.res.headers.get('content-type') ?? '').startsWith('text/html')) return;
    const html = (await c.res.text())
      .replace(/<link[^>]+href="https?:\/\/[^"]*"[^>]*>/g, '')
      // bull-board has no way back to the dashboard of its own: a fixed link outside its app.
      .replace(/<body([^>]*)>/, `<body$1>${BACK_TO_DASHBOARD}`);
    c.res = new Response(html, { status: c.res.status, headers: c.res.headers });
  });
  app.route('/queues', board.registerPlugin());

  app.use('/assets/*', async (c, next) => {
    await next();
    if (c.res.status === 200) c.header('Cache-Control', 'public, max-age=31536000, immutable');
  });
  app.use('/assets/*', serveStatic({ root: WEB_DIST_DIR, precompressed: true }));
  app.get('/favicon.svg', serveStatic({ root: WEB_DIST_DIR }));

  /**
   * The front end's page, HTTP 404 when `lookup` finds nothing. What `lookup` returns goes into the
   * page as inert JSON (`<` escaped), so the first paint needs no API round trip.
   */
  const page = async (
    c: Context,
    lookup: () => Promise<{
      found: boolean;
      initial?: { id: string; data: unknown };
      firstPaint?: string;
      preloadImage?: string;
    }>,
  ) => {
    // Read each time (it is small), so that a rebuild is picked up without a restart.
    let html = await readFile(join(WEB_DIST_DIR, 'index.html'), 'utf8');
    // A database that is down must not turn every page into a 404: the page shows a banner instead.
    const { found, initial, firstPaint, preloadImage } = await lookup().catch(() => ({
      found: true,
      initial: undefined,
      firstPaint: undefined,
      preloadImage: undefined,
    }));
    // The frame a trajectory opens on starts loading while the scripts are still being parsed.
    if (preloadImage)
      html = html.replace(
        '</head>',
        `<link rel="preload" as="image" href="${preloadImage}" fetchpriority="high"></head>`,
      );
    if (initial) {
      const json = JSON.stringify(initial.data).replace(/</g, '\\u003c');
      html = html.replace(
        '<div id="root"></div>',
        `<script type="application/json" id="${initial.id}">${json}</script><div id="root">${firstPaint ?? ''}</div>`,
      );
    }
    c.header('Cache-Control', 'no-cache');
    return c.html(html, found ? 200 : 404);
  };
  const always = async () => ({ found: true });
  app.get('/', (c) => page(c, always));
  app.get('/compare', (c) => page(c, always));
  app.get('/runs/:run', (c) =>
    page(c, async () => {
      try {
        const data = await runResponse(c.req.param('run'));
        return {
          found: true,
          initial: { id: 'initial-run', data },
          firstPaint: runFirstPaintHtml(data.run as unknown as FirstPaintRun, data.provisional),
        };
      } catch (error) {
        if (error instanceof NotFound) return { found: false };
        throw error;
      }
    }),
  );
  app.get('/runs/:run/tasks/:task', (c) =>
    page(c, async () => {
      const values = { run: c.req.param('run'), task: c.req.param('task') };
      let detail: Awaited<ReturnType<typeof taskDetail>>;
      try {
        detail = await taskDetail(values);
      } catch (error) {
        if (error instanceof NotFound) return { found: false };
        throw error;
      }
      const attemptParam = Number(c.req.query('attempt'));
      const stepParam = Number(c.req.query('step'));
      const attempt =
        Number.isInteger(attemptParam) && c.req.query('attempt')
          ? attemptParam
          : (detail.attempts.at(-1)?.attempt ?? 1);
      const { steps, index } = selectedStep(
        detail.steps,
        attempt,
        Number.isInteger(stepParam) && c.req.query('step') ? stepParam : undefined,
      );
      const { frame } = actionFrame(steps, index);
      const screenshots = benchmarkDisplay(detail.task.benchmark).trajectoryView === 'screenshots';
      return {
        found: true,
        initial: { id: 'initial-task', data: detail },
        ...(screenshots && frame
          ? { preloadImage: screenshotPath(values.run, values.task, frame) }
          : {}),
      };
    }),
  );
  app.get('/compare/tasks/:task', (c) => page(c, always));
  app.all('*', (c) => page(c, async () => ({ found: false })));

  return {
    app,
    async close() {
      feed.close();
      await fleet.close();
    },
  };
}

/** Starts the dashboard on `host:port`; the caller owns `db` and closes it after `close()`. */
export async function startDashboardServer(
  options: DashboardServerOptions & { host: string; port: number },
): Promise<DashboardServer> {
  const { app, close } = createDashboardApp(options);
  const server = createAdaptorServer({ fetch: app.fetch }) as Server;
  const port = await listenOn(server, {
    port: options.port,
    host: options.host,
    what: 'dashboard port',
    setting: '--port',
  });
  const shownHost = options.host.includes(':') ? `[${options.host}]` : options.host;
  return {
    server,
    port,
    url: `http://${shownHost}:${port}`,
    async close() {
      await close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
