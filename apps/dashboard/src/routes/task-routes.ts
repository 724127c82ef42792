import { Hono } from 'hono';
import { runNamedQuery } from '@benchfleet/db';
import type { DashboardContext } from '../dashboard-context.js';
import { loadTaskDetail } from '../task-detail.js';
import { screenshotQuery } from '../task-queries.js';

const SCREENSHOT_ROUTE = '/api/runs/:run/tasks/:task/attempts/:attempt/steps/:step/screenshot';

/** One task: its detail (attempts, steps, the benchmark's own panels) and its step screenshots. */
export function taskRoutes({
  db,
  benchmarks,
  screenshots,
}: Pick<DashboardContext, 'db' | 'benchmarks' | 'screenshots'>): Hono {
  const routes = new Hono();
  routes.get('/api/runs/:run/tasks/:task', async (c) =>
    c.json(
      await loadTaskDetail(db, benchmarks, { run: c.req.param('run'), task: c.req.param('task') }),
    ),
  );
  routes.get(SCREENSHOT_ROUTE, async (c) => {
    const attempt = Number(c.req.param('attempt'));
    const step = Number(c.req.param('step'));
    if (!Number.isInteger(attempt) || !Number.isInteger(step))
      return c.json({ error: 'attempt and step are whole numbers' }, 404);
    const [row] = await runNamedQuery<
      { screenshot_uri: string | null },
      'run' | 'task' | 'attempt' | 'step'
    >(db, screenshotQuery, { run: c.req.param('run'), task: c.req.param('task'), attempt, step });
    const image = row?.screenshot_uri ? await screenshots.read(row.screenshot_uri) : undefined;
    if (!image) return c.json({ error: 'no screenshot in the artifact store for this step' }, 404);
    c.header('Cache-Control', 'private, max-age=31536000, immutable');
    c.header('Content-Type', image.contentType);
    return c.body(new Uint8Array(image.bytes));
  });
  return routes;
}
