import { defineQuery } from '@benchfleet/db';

// The runs × tasks grid: which runs (by id, or a filter on name and benchmark), then every task
// of those runs with each run's verdict per epoch, built by Postgres as one JSON text.

/** The most runs one grid takes from a filter (ids named one by one are all taken). */
export const GRID_RUN_LIMIT = 200;

export const gridRunsQuery = defineQuery({
  name: 'grid_runs',
  title:
    'The runs of the grid: those named (in their order), or those whose name or id and benchmark match',
  params: ['runs', 'q', 'benchmark', 'limit'],
  sql: `
select r.id as run_id, r.name, r.benchmark, r.status, r.created_at
from runs r
left join jsonb_array_elements_text(:runs::jsonb) with ordinality as named(id, ord) on named.id = r.id
where (jsonb_array_length(:runs::jsonb) = 0 or named.id is not null)
  and (:q = '' or strpos(lower(r.name || ' ' || r.id), lower(:q)) > 0)
  and (:benchmark = '' or r.benchmark = :benchmark)
order by named.ord, r.created_at desc, r.id
limit :limit`,
});

// A task row's benchmark task and its epoch: the one place epochs enter the grid (each sample of a
// task is its own row, `<task id>.epoch<e>` for e > 1; see README, "Epochs").
const TASK_OF_ROW = 't.base_task_id';
const EPOCH_OF_ROW = 't.epoch';

/**
 * Which tasks the grid shows: every one, those whose verdicts differ between runs (each run's pass
 * rate over its settled epochs, where two or more runs settled the task), those with a failed
 * sample, or those with an infra error (status `error`: the retries after faults ran out).
 */
export const GRID_SHOWS = ['all', 'differ', 'failed', 'infra'] as const;
export type GridShow = (typeof GRID_SHOWS)[number];

export const gridCellsQuery = defineQuery({
  name: 'grid_cells',
  title:
    "The tasks of the runs the filter keeps (show: all, differ, failed, infra; task: id or instruction contains), each run's verdict per epoch: [task, {run position: [[epoch, status, reward, row id]]}]",
  params: ['runs', 'show', 'task'],
  sql: `
with chosen as (
  select id, ord::int from jsonb_array_elements_text(:runs::jsonb) with ordinality as c(id, ord)
), cells as (
  select ${TASK_OF_ROW} as task_id, c.ord,
         json_agg(json_build_array(${EPOCH_OF_ROW}, t.status, t.reward,
                                   case when t.task_id <> ${TASK_OF_ROW} then t.task_id end)
                  order by ${EPOCH_OF_ROW}) as epochs,
         avg((t.status = 'success')::int)
           filter (where t.status in ('success', 'failed', 'cancelled', 'error')) as pass_rate,
         bool_or(t.status = 'failed') as failed,
         bool_or(t.status = 'error') as infra,
         bool_or(:task = '' or strpos(lower(${TASK_OF_ROW} || ' ' || t.instruction), lower(:task)) > 0) as named
  from chosen c
  join tasks t on t.run_id = c.id
  group by 1, 2
), per_task as (
  select task_id, json_object_agg(ord, epochs) as cells,
         count(distinct pass_rate) > 1 as differ, bool_or(failed) as failed,
         bool_or(infra) as infra, bool_or(named) as named
  from cells group by task_id
)
select coalesce(json_agg(json_build_array(task_id, cells) order by task_id)
                  filter (where named and (:show = 'all' or (:show = 'differ' and differ)
                          or (:show = 'failed' and failed) or (:show = 'infra' and infra))),
                '[]')::text as rows,
       count(*)::int as total
from per_task`,
});
