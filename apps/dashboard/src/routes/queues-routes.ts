import { createBullBoard } from '@bull-board/api';
import { BullMQAdapter } from '@bull-board/api/bullMQAdapter';
import { HonoAdapter } from '@bull-board/hono';
import { serveStatic } from '@hono/node-server/serve-static';
import { Hono } from 'hono';
import type { DashboardContext } from '../dashboard-context.js';

// bull-board's page: its own scripts and styles, and nothing from elsewhere (it links a web font).
const QUEUE_VIEW_CSP =
  "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; font-src 'self'; connect-src 'self'; object-src 'none'; base-uri 'self'; frame-ancestors 'none'";

/** The queue view's way back: outside bull-board's own markup, so its app cannot replace it. */
const BACK_TO_DASHBOARD =
  '<a href="/" data-link="back-to-benchfleet" style="position:fixed;right:16px;bottom:16px;z-index:10000;padding:6px 12px;border-radius:4px;background:#1f5f99;color:#fff;font:14px/1.4 system-ui,sans-serif;text-decoration:none;box-shadow:0 1px 4px rgba(0,0,0,.3)">← benchfleet runs</a>';

/** The queue view: bull-board over the fleet's queues, read-only, at /queues. */
export function queuesRoutes({ fleet }: Pick<DashboardContext, 'fleet'>): Hono {
  const board = new HonoAdapter(serveStatic);
  createBullBoard({
    queues: [...fleet.queues.values()].map(
      (queue) => new BullMQAdapter(queue, { readOnlyMode: true }),
    ),
    serverAdapter: board,
    options: { uiConfig: { boardTitle: 'benchfleet queues' } },
  });
  board.setBasePath('/queues');
  const routes = new Hono();
  routes.use('/queues/*', async (c, next) => {
    await next();
    c.header('Content-Security-Policy', QUEUE_VIEW_CSP);
    if (!(c.res.headers.get('content-type') ?? '').startsWith('text/html')) return;
    const html = (await c.res.text())
      // Nothing is fetched from the internet at run time: drop the web-font link from its page.
      .replace(/<link[^>]+href="https?:\/\/[^"]*"[^>]*>/g, '')
      // bull-board has no way back to the dashboard of its own: a fixed link outside its app.
      .replace(/<body([^>]*)>/, `<body$1>${BACK_TO_DASHBOARD}`);
    c.res = new Response(html, { status: c.res.status, headers: c.res.headers });
  });
  routes.route('/queues', board.registerPlugin());
  return routes;
}
