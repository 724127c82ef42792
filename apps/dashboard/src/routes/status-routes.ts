import { Hono } from 'hono';
import { sql } from 'kysely';
import type { BenchmarkView, HealthResponse } from '../../shared/view-rows.js';
import type { DashboardContext } from '../dashboard-context.js';

/** Whether Postgres and Redis answer (the banner's check), and how each benchmark is shown. */
export function statusRoutes({
  db,
  fleet,
  benchmarks,
}: Pick<DashboardContext, 'db' | 'fleet' | 'benchmarks'>): Hono {
  const routes = new Hono();
  routes.get('/api/health', async (c) => {
    const [database, redis] = await Promise.all([
      sql`select 1`.execute(db).then(
        () => 'up' as const,
        () => 'down' as const,
      ),
      fleet.ping().then((up) => (up ? ('up' as const) : ('down' as const))),
    ]);
    return c.json({ database, redis } satisfies HealthResponse);
  });
  routes.get('/api/benchmarks', (c) =>
    c.json(benchmarks.all() satisfies Record<string, BenchmarkView>),
  );
  return routes;
}
