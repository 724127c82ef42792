import { Hono } from 'hono';
import { runNamedQuery } from '@benchfleet/db';
import type { GridResponse, GridRun } from '../../shared/run-time-rows.js';
import type { DashboardContext } from '../dashboard-context.js';
import {
  GRID_RUN_LIMIT,
  GRID_SHOWS,
  gridCellsQuery,
  gridRunsQuery,
  type GridShow,
} from '../grid-queries.js';
import { KeptAnswers } from '../kept-answers.js';
import { shown } from '../shown-sql.js';

/** Grids kept (each up to a few MB of JSON for 3 × 20,000 cells, ~0.5 MB gzipped). */
const GRIDS_KEPT = 8;

/**
 * The runs × tasks grid: `?run=a&run=b…` names runs (in that order), or `?q=` (name or id) and
 * `?benchmark=` filter them; `?show=` (all, differ, failed, infra) and `?task=` (id or instruction
 * contains) choose the tasks. The rows arrive as Postgres wrote them, spliced into the answer
 * unparsed, and are kept until a task of one of the runs starts or settles.
 */
export function gridRoutes({ db }: Pick<DashboardContext, 'db'>): Hono {
  const kept = new KeptAnswers(db, GRIDS_KEPT);
  const routes = new Hono();
  routes.get('/api/grid', async (c) => {
    const show = c.req.query('show') || 'all';
    if (!(GRID_SHOWS as readonly string[]).includes(show))
      return c.json({ error: `show=${show} is none of ${GRID_SHOWS.join(', ')}` }, 400);
    const named = (c.req.queries('run') ?? []).filter((id) => id !== '');
    const filter = {
      runs: JSON.stringify(named),
      q: c.req.query('q') ?? '',
      benchmark: c.req.query('benchmark') ?? '',
      limit: named.length ? named.length : GRID_RUN_LIMIT + 1,
    };
    const found = await runNamedQuery<GridRun, 'runs' | 'q' | 'benchmark' | 'limit'>(
      db,
      gridRunsQuery,
      filter,
    );
    const runs = found.slice(0, named.length ? named.length : GRID_RUN_LIMIT);
    const ids = runs.map((run) => run.run_id);
    const cells = {
      runs: JSON.stringify(ids),
      show: show as GridShow,
      task: c.req.query('task') ?? '',
    };
    const { cursor } = await kept.cursorOf(ids);
    const head: Omit<GridResponse, 'rows' | 'total_tasks'> = {
      runs,
      more_runs: found.length > runs.length,
      queries: [shown(gridRunsQuery, filter), shown(gridCellsQuery, cells)],
    };
    // The runs' names and the filter are in the answer too: both are part of what it is kept under.
    return kept.answer(c, JSON.stringify(head), cursor, async () => {
      const [row] = await runNamedQuery<{ rows: string; total: number }, 'runs' | 'show' | 'task'>(
        db,
        gridCellsQuery,
        cells,
      );
      return `${JSON.stringify(head).slice(0, -1)},"total_tasks":${row?.total ?? 0},"rows":${row?.rows ?? '[]'}}`;
    });
  });
  return routes;
}
