import { Hono } from 'hono';
import { runNamedQuery } from '@benchfleet/db';
import type { RunListRow, RunsResponse } from '../../shared/view-rows.js';
import type { DashboardContext } from '../dashboard-context.js';
import { runsListQuery } from '../run-queries.js';
import { shown } from '../shown-sql.js';

/** The runs list. */
export function runsRoutes({ db }: Pick<DashboardContext, 'db'>): Hono {
  const routes = new Hono();
  routes.get('/api/runs', async (c) => {
    const runs = await runNamedQuery<RunListRow, never>(db, runsListQuery, {});
    return c.json({ runs, queries: [shown(runsListQuery, {})] } satisfies RunsResponse);
  });
  return routes;
}
