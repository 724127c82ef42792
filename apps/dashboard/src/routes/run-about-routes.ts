import { Hono } from 'hono';
import type { DashboardContext } from '../dashboard-context.js';
import { loadRunAbout } from '../run-about.js';
import { DownloadRefused } from '../run-downloads.js';
import { requireRun } from '../run-view.js';

/** A run's provenance, configuration digest and its benchmark's run panels; its exports as zip downloads. */
export function runAboutRoutes({
  db,
  benchmarks,
  downloads,
}: Pick<DashboardContext, 'db' | 'benchmarks' | 'downloads'>): Hono {
  const routes = new Hono();
  routes.get('/api/runs/:run/about', async (c) =>
    c.json(
      await loadRunAbout(
        db,
        benchmarks,
        (benchmark) => downloads.formatsOf(benchmark),
        c.req.param('run'),
      ),
    ),
  );
  routes.get('/api/runs/:run/exports/:format', async (c) => {
    const run = await requireRun(db, c.req.param('run'));
    try {
      const { body, fileName } = await downloads.zip(
        run.run_id,
        run.benchmark,
        c.req.param('format'),
      );
      return new Response(body, {
        headers: {
          'Content-Type': 'application/zip',
          'Content-Disposition': `attachment; filename="${fileName}"`,
          'Cache-Control': 'no-store',
        },
      });
    } catch (error) {
      if (error instanceof DownloadRefused) return c.json({ error: error.message }, error.status);
      throw error;
    }
  });
  return routes;
}
