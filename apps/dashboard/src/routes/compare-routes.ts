import { Hono } from 'hono';
import {
  comparisonCoverageQuery,
  loadRunComparison,
  pairedTasksQuery,
} from '@benchfleet/run-comparison';
import type { CompareResponse } from '../../shared/view-rows.js';
import type { DashboardContext } from '../dashboard-context.js';
import { NotFound } from '../http-policy.js';
import { shown } from '../shown-sql.js';

/** Two runs on the same tasks: the numbers `scheduler compare` prints, and their SQL. */
export function compareRoutes({ db }: Pick<DashboardContext, 'db'>): Hono {
  const routes = new Hono();
  routes.get('/api/compare', async (c) => {
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
    } satisfies CompareResponse);
  });
  return routes;
}
