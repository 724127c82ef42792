import { Hono } from 'hono';
import type { DashboardContext } from '../dashboard-context.js';
import { loadLlmUsage } from '../llm-usage.js';
import { requireRun } from '../run-view.js';

/** The LLM governor's lanes (Redis) and a run's spend and projection (Postgres), for the run page. */
export function llmRoutes({ db, governor }: Pick<DashboardContext, 'db' | 'governor'>): Hono {
  const routes = new Hono();
  routes.get('/api/runs/:run/llm', async (c) => {
    const run = await requireRun(db, c.req.param('run'));
    return c.json(await loadLlmUsage(db, governor, run));
  });
  return routes;
}
