import { Hono } from 'hono';
import { runNamedQuery } from '@benchfleet/db';
import type { RunListEntry, RunsResponse } from '../../shared/view-rows.js';
import type { DashboardContext } from '../dashboard-context.js';
import { shown } from '../shown-sql.js';

/** The runs list, each run with its grade where its benchmark has one. */
export function runsRoutes({ db, benchmarks }: Pick<DashboardContext, 'db' | 'benchmarks'>): Hono {
  const routes = new Hono();
  const query = benchmarks.runsListQuery;
  routes.get('/api/runs', async (c) => {
    const runs = await runNamedQuery<RunListEntry, never>(db, query, {});
    return c.json({ runs, queries: [shown(query, {})] } satisfies RunsResponse);
  });
  return routes;
}
