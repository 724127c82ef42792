import { Hono } from 'hono';
import type { FleetResponse } from '../../shared/view-rows.js';
import type { DashboardContext } from '../dashboard-context.js';
import { requireRun } from '../run-view.js';

/** The workers on a run's queue, from BullMQ (Redis), and how to start one when none is there. */
export function fleetRoutes({
  db,
  fleet,
  benchmarks,
}: Pick<DashboardContext, 'db' | 'fleet' | 'benchmarks'>): Hono {
  const routes = new Hono();
  routes.get('/api/runs/:run/fleet', async (c) => {
    const run = await requireRun(db, c.req.param('run'));
    const view = benchmarks.view(run.benchmark);
    const workers = await fleet.view(view.queue, run.run_id);
    return c.json({
      ...workers,
      pending: run.queued + run.running,
      worker_command: view.workerCommand,
    } satisfies FleetResponse);
  });
  return routes;
}
