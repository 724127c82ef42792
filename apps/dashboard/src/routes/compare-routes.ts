import { Hono } from 'hono';
import { defineQuery, runNamedQuery, type Database } from '@benchfleet/db';
import {
  comparisonCoverageQuery,
  loadRunComparison,
  pairedTasksQuery,
} from '@benchfleet/run-comparison';
import type { CompareResponse, RunConfiguration, SearchResponse } from '../../shared/view-rows.js';
import type { BenchmarkViews } from '../benchmark-views.js';
import { configDifference } from '../config-difference.js';
import type { DashboardContext } from '../dashboard-context.js';
import { NotFound } from '../http-policy.js';
import { pairedSearchQuery } from '../run-queries.js';
import { shown } from '../shown-sql.js';

export const comparedConfigurationsQuery = defineQuery({
  name: 'compared_configurations',
  title: "The two runs' configurations as stored",
  params: ['run_a', 'run_b'],
  sql: `
select id as run_id, benchmark, config, model, agent, code_version
from runs
where id in (:run_a, :run_b)`,
});

/** What the difference is computed over: the stored configuration, model, agent and code version. */
const compared = ({ config, model, agent, code_version }: RunConfiguration) => ({
  config,
  model,
  agent,
  code_version,
});

/** A run's grade per graded task, for a benchmark with a grade. */
async function gradesOf(
  db: Database,
  benchmarks: BenchmarkViews,
  run: RunConfiguration & { benchmark: string },
) {
  const query = benchmarks.queriesOf(run.benchmark).taskGrades;
  if (!query) return { grades: null, query: undefined };
  const rows = await runNamedQuery<{ task_id: string; score: number | null }, 'run'>(db, query, {
    run: run.run_id,
  });
  return {
    // No graded task: the run shows the recorded success only.
    grades: rows.length ? Object.fromEntries(rows.map((row) => [row.task_id, row.score])) : null,
    query: shown(query, { run: run.run_id }),
  };
}

/** Two runs on the same tasks: the numbers `scheduler compare` prints, their configurations, and their SQL. */
export function compareRoutes({
  db,
  benchmarks,
}: Pick<DashboardContext, 'db' | 'benchmarks'>): Hono {
  const routes = new Hono();
  routes.get('/api/compare', async (c) => {
    const a = c.req.query('a') ?? '';
    const b = c.req.query('b') ?? '';
    const values = { run_a: a, run_b: b };
    const [{ comparison, coverage }, configurations] = await Promise.all([
      loadRunComparison(db, a, b),
      runNamedQuery<RunConfiguration & { benchmark: string }, 'run_a' | 'run_b'>(
        db,
        comparedConfigurationsQuery,
        values,
      ),
    ]);
    const configurationOf = (id: string) => {
      const found = configurations.find((run) => run.run_id === id);
      if (!found || !coverage.some((run) => run.run_id === id))
        throw new NotFound(`run ${id || '(none)'} not found`);
      return found;
    };
    const [runA, runB] = [configurationOf(a), configurationOf(b)];
    const [gradesA, gradesB] = await Promise.all([
      gradesOf(db, benchmarks, runA),
      gradesOf(db, benchmarks, runB),
    ]);
    const strip = ({ benchmark: _, ...run }: RunConfiguration & { benchmark: string }) => run;
    return c.json({
      comparison,
      coverage,
      configurations: { a: strip(runA), b: strip(runB) },
      config_difference: configDifference(compared(runA), compared(runB)),
      grades: { a: gradesA.grades, b: gradesB.grades },
      queries: [
        shown(pairedTasksQuery, values),
        shown(comparisonCoverageQuery, values),
        shown(comparedConfigurationsQuery, values),
        ...[gradesA.query, gradesB.query].filter((query) => query !== undefined),
      ],
    } satisfies CompareResponse);
  });
  // Full-text search over both runs' tasks, for the flipped list.
  routes.get('/api/compare/search', async (c) => {
    const values = {
      run_a: c.req.query('a') ?? '',
      run_b: c.req.query('b') ?? '',
      q: c.req.query('q') ?? '',
    };
    const [row] = await runNamedQuery<{ task_ids: string }, 'run_a' | 'run_b' | 'q'>(
      db,
      pairedSearchQuery,
      values,
    );
    return c.json({
      task_ids: JSON.parse(row?.task_ids ?? '[]') as string[],
      query: shown(pairedSearchQuery, values),
    } satisfies SearchResponse);
  });
  return routes;
}
