import { useRef } from 'react';
import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { useVirtualizer } from '@tanstack/react-virtual';
import { apiGet, type GridEpoch, type GridResponse } from './api';
import { decimal } from './format';
import { Link, setQuery, useLocation, useQueryText, useTitle } from './router';
import { Panel } from './sql-panel';

// Runs × tasks: one row per benchmark task, one column per run, each cell the run's verdict per
// epoch (status and reward, linked to the task). Runs named by `?run=` or found by `?q=` and
// `?benchmark=`; the tasks chosen by `?show=` (verdicts differ between runs, a failed sample, an
// infra error) and `?task=` (id or instruction contains); the rows are virtualised, so 20,000 tasks cost a few dozen DOM rows.

const ROW_HEIGHT = 28;
const encode = encodeURIComponent;

const MARK: Record<string, string> = {
  success: '✓',
  failed: '✗',
  error: '!',
  cancelled: '–',
  queued: '·',
  running: '…',
};

function EpochVerdict({
  runId,
  taskId,
  epoch,
}: {
  runId: string;
  taskId: string;
  epoch: GridEpoch;
}) {
  const [number, status, reward, rowId] = epoch;
  const reward_ = reward === null ? '' : ` ${decimal(reward, 2)}`;
  return (
    <Link
      href={`/runs/${encode(runId)}/tasks/${encode(rowId ?? taskId)}`}
      className={`verdict status-${status}`}
      data-epoch={number}
      data-status={status}
      title={`epoch ${number}: ${status}${reward === null ? '' : `, reward ${reward}`}`}
    >
      {MARK[status] ?? status}
      {reward_}
    </Link>
  );
}

const SHOWS: Array<[string, string]> = [
  ['all', 'all tasks'],
  ['differ', 'verdicts differ between runs'],
  ['failed', 'a sample failed'],
  ['infra', 'an infra error'],
];

/** Which tasks of the runs are shown: by their verdicts, and by id or instruction. */
function TaskFilters({ response }: { response: GridResponse | undefined }) {
  const [task, setTask] = useQueryText('task');
  const { query } = useLocation();
  const filtered = response !== undefined && response.rows.length !== response.total_tasks;
  return (
    <div className="filter-bar" data-grid-task-filters="">
      <select
        name="show"
        aria-label="Show tasks"
        value={query.get('show') ?? 'all'}
        onChange={(event) =>
          setQuery({ show: event.target.value === 'all' ? null : event.target.value })
        }
      >
        {SHOWS.map(([value, label]) => (
          <option key={value} value={value}>
            {label}
          </option>
        ))}
      </select>
      <input
        type="search"
        name="task"
        placeholder="task id or instruction contains…"
        aria-label="Filter tasks by id or instruction"
        value={task}
        onChange={(event) => setTask(event.target.value)}
      />
      {response && (
        <span className="muted" data-count="grid">
          {filtered && `${response.rows.length} of `}
          {response.total_tasks} tasks × {response.runs.length} runs
          {response.more_runs && ' (more runs match: narrow the filter)'}
        </span>
      )}
    </div>
  );
}

function GridFilters() {
  const [q, setQ] = useQueryText('q');
  const { query } = useLocation();
  const named = query.getAll('run');
  return (
    <div className="filter-bar" data-grid-filters="">
      {named.length > 0 ? (
        <span>
          {named.length} runs named ·{' '}
          <button type="button" onClick={() => setQuery({ run: null })}>
            filter instead
          </button>
        </span>
      ) : (
        <>
          <input
            type="search"
            placeholder="run name or id contains…"
            aria-label="Filter runs by name or id"
            value={q}
            onChange={(event) => setQ(event.target.value)}
          />
          <input
            type="text"
            placeholder="benchmark"
            aria-label="Benchmark"
            defaultValue={query.get('benchmark') ?? ''}
            onChange={(event) => setQuery({ benchmark: event.target.value })}
          />
        </>
      )}
    </div>
  );
}

export function GridPage() {
  const { query } = useLocation();
  const search = query.toString();
  useTitle('Runs × tasks');
  const grid = useQuery({
    queryKey: ['grid', search],
    queryFn: () => apiGet<GridResponse>(`/api/grid?${search}`),
    placeholderData: keepPreviousData,
  });
  const data = grid.data;
  const scroller = useRef<HTMLDivElement>(null);
  const rows = data?.rows ?? [];
  const virtualizer = useVirtualizer({
    count: rows.length,
    getScrollElement: () => scroller.current,
    estimateSize: () => ROW_HEIGHT,
    overscan: 12,
  });
  const runs = data?.runs ?? [];
  const template = `240px repeat(${Math.max(runs.length, 1)}, minmax(120px, 1fr))`;
  return (
    <div className="grid-page" data-page="grid">
      <h1>Runs × tasks</h1>
      <Panel id="grid" title="Verdicts per run and epoch" queries={data?.queries}>
        <GridFilters />
        <TaskFilters response={data} />
        <div className="runs-grid" data-table="grid">
          <div className="runs-grid-head" role="row" style={{ gridTemplateColumns: template }}>
            <span>Task</span>
            {runs.map((run) => (
              <Link key={run.run_id} href={`/runs/${encode(run.run_id)}`} data-run={run.run_id}>
                {run.name}
                <span className="muted"> {run.benchmark}</span>
              </Link>
            ))}
          </div>
          <div className="runs-grid-body" ref={scroller}>
            <div style={{ height: virtualizer.getTotalSize(), position: 'relative' }}>
              {virtualizer.getVirtualItems().map((item) => {
                const [taskId, cells] = rows[item.index] ?? ['', {}];
                return (
                  <div
                    key={taskId}
                    className="runs-grid-row"
                    role="row"
                    data-task={taskId}
                    style={{
                      gridTemplateColumns: template,
                      transform: `translateY(${item.start}px)`,
                      height: ROW_HEIGHT,
                    }}
                  >
                    <span className="task-id">{taskId}</span>
                    {runs.map((run, i) => (
                      <span key={run.run_id} data-run={run.run_id}>
                        {(cells[String(i + 1)] ?? []).map((epoch) => (
                          <EpochVerdict
                            key={epoch[0]}
                            runId={run.run_id}
                            taskId={taskId}
                            epoch={epoch}
                          />
                        ))}
                        {!cells[String(i + 1)] && (
                          <span className="muted" data-status="not-run">
                            not run
                          </span>
                        )}
                      </span>
                    ))}
                  </div>
                );
              })}
            </div>
          </div>
        </div>
      </Panel>
    </div>
  );
}
