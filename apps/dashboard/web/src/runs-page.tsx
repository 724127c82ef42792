import { useMemo, useState } from 'react';
import { useQuery } from '@tanstack/react-query';
import { runProgress } from '../../shared/run-progress';
import type { CsvColumn } from '../../shared/csv';
import { apiGet, type RunListRow, type RunsResponse } from './api';
import { CsvButton } from './csv-button';
import { benchmarkView } from './benchmark-views';
import { decimal, duration, modelOrAgent, percent, spanSeconds, timestamp } from './format';
import { RunCostCell, RunHaltLine, RunScoresLines } from './limits-panels';
import { Link, navigate, setQuery, useLocation, useQueryText, useTitle } from './router';
import { Panel } from './sql-panel';

type SortKey =
  | 'name'
  | 'benchmark'
  | 'model'
  | 'status'
  | 'progress'
  | 'success_rate'
  | 'avg_reward'
  | 'started_at'
  | 'duration'
  | 'cost_usd';

const COLUMNS: { key: SortKey; label: string; numeric?: boolean }[] = [
  { key: 'name', label: 'Run' },
  { key: 'benchmark', label: 'Benchmark' },
  { key: 'model', label: 'Model / agent' },
  { key: 'status', label: 'Status' },
  { key: 'progress', label: 'Progress', numeric: true },
  { key: 'success_rate', label: 'Success rate', numeric: true },
  { key: 'avg_reward', label: 'Mean reward', numeric: true },
  { key: 'started_at', label: 'Started' },
  { key: 'duration', label: 'Duration', numeric: true },
  { key: 'cost_usd', label: 'Cost', numeric: true },
];

const ran = (run: RunListRow) => runProgress(run).ran;

function sortValue(run: RunListRow, key: SortKey): string | number {
  switch (key) {
    case 'model':
      return modelOrAgent(run.model, run.agent);
    case 'status':
      return run.run_status;
    case 'progress':
      return run.total ? ran(run) / run.total : 0;
    case 'duration':
      return spanSeconds(run.started_at, run.finished_at) ?? -1;
    case 'started_at':
      return run.started_at ?? run.created_at;
    case 'success_rate':
      return run.success_rate ?? -1;
    case 'avg_reward':
      return run.avg_reward ?? -1;
    case 'cost_usd':
      return run.cost_usd ?? -1;
    default:
      return run[key];
  }
}

const RUNS_CSV: CsvColumn<RunListRow>[] = [
  ...(
    [
      'run_id',
      'name',
      'benchmark',
      'run_status',
      'total',
      'queued',
      'running',
      'succeeded',
      'failed',
      'cancelled',
      'errors',
      'never_started',
      'success_rate',
      'success_rate_excluding_infra',
      'infra_failed',
      'budget_stopped',
      'halt',
      'halt_reason',
    ] as const
  ).map((key) => ({ label: key, value: (run: RunListRow) => run[key] })),
  { label: 'success_label', value: (run) => benchmarkView(run.benchmark).successLabel },
  ...(['graded', 'scored', 'graded_success_rate', 'mean_score'] as const).map((key) => ({
    label: key,
    value: (run: RunListRow) => run[key],
  })),
  ...(
    [
      'avg_reward',
      'cost_usd',
      'unpriced',
      'max_cost_usd',
      'over_limit_usd',
      'max_task_cost_usd',
      'tasks_over_limit',
      'projected_cost_usd',
      'created_at',
      'started_at',
      'finished_at',
    ] as const
  ).map((key) => ({ label: key, value: (run: RunListRow) => run[key] })),
  { label: 'model', value: (run) => run.model },
  { label: 'agent', value: (run) => run.agent },
];

export function RunsPage() {
  useTitle('Runs');
  const { query } = useLocation();
  const benchmark = query.get('benchmark') ?? '';
  const status = query.get('status') ?? '';
  const text = query.get('q') ?? '';
  const sort = (query.get('sort') as SortKey | null) ?? 'started_at';
  const dir = query.get('dir') === 'asc' ? 'asc' : 'desc';
  const [selected, setSelected] = useState<string[]>([]);
  const runs = useQuery({
    queryKey: ['runs'],
    queryFn: () => apiGet<RunsResponse>('/api/runs'),
    refetchInterval: 5_000,
  });

  const all = runs.data?.runs ?? [];
  const benchmarks = [...new Set(all.map((run) => run.benchmark))].sort();
  const statuses = [...new Set(all.map((run) => run.run_status))].sort();
  const visible = useMemo(() => {
    const needle = text.toLowerCase();
    const filtered = all.filter(
      (run) =>
        (!benchmark || run.benchmark === benchmark) &&
        (!status || run.run_status === status) &&
        (!needle ||
          `${run.name} ${run.run_id} ${modelOrAgent(run.model, run.agent)}`
            .toLowerCase()
            .includes(needle)),
    );
    const sign = dir === 'asc' ? 1 : -1;
    return filtered.sort((x, y) => {
      const a = sortValue(x, sort);
      const b = sortValue(y, sort);
      return (a < b ? -1 : a > b ? 1 : 0) * sign;
    });
  }, [all, benchmark, status, text, sort, dir]);

  const toggle = (runId: string) =>
    setSelected((current) =>
      current.includes(runId)
        ? current.filter((id) => id !== runId)
        : [...current.slice(-1), runId],
    );

  return (
    <Panel
      id="runs"
      title="Runs"
      queries={runs.data?.queries}
      actions={
        <>
          <CsvButton name="runs" fileName="runs.csv" columns={RUNS_CSV} rows={() => visible} />
          <button
            type="button"
            disabled={selected.length !== 2}
            onClick={() =>
              navigate(
                `/compare?a=${encodeURIComponent(selected[0] ?? '')}&b=${encodeURIComponent(selected[1] ?? '')}`,
              )
            }
          >
            Compare selected ({selected.length}/2)
          </button>
        </>
      }
    >
      <RunsFilters
        benchmarks={benchmarks}
        statuses={statuses}
        shown={visible.length}
        total={all.length}
      />
      {runs.isError && <p className="error">Could not load runs: {runs.error.message}</p>}
      <table className="grid" data-table="runs">
        <RunsHead sort={sort} dir={dir} />
        <tbody>
          {visible.map((run) => (
            <RunLine
              key={run.run_id}
              run={run}
              selected={selected.includes(run.run_id)}
              onToggle={() => toggle(run.run_id)}
            />
          ))}
        </tbody>
      </table>
      {runs.isSuccess && all.length === 0 && (
        <p className="muted">No runs yet: start one with `npx scheduler enqueue …`.</p>
      )}
    </Panel>
  );
}

/** Benchmark, status and text filters, kept in the URL. */
function RunsFilters({
  benchmarks,
  statuses,
  shown,
  total,
}: {
  benchmarks: string[];
  statuses: string[];
  shown: number;
  total: number;
}) {
  const { query } = useLocation();
  const [typed, setTyped] = useQueryText('q');
  return (
    <div className="filters" role="search">
      <label>
        Benchmark{' '}
        <select
          name="benchmark"
          value={query.get('benchmark') ?? ''}
          onChange={(event) => setQuery({ benchmark: event.target.value })}
        >
          <option value="">all</option>
          {benchmarks.map((name) => (
            <option key={name}>{name}</option>
          ))}
        </select>
      </label>
      <label>
        Status{' '}
        <select
          name="status"
          value={query.get('status') ?? ''}
          onChange={(event) => setQuery({ status: event.target.value })}
        >
          <option value="">all</option>
          {statuses.map((name) => (
            <option key={name}>{name}</option>
          ))}
        </select>
      </label>
      <label>
        Search{' '}
        <input
          name="q"
          type="search"
          value={typed}
          placeholder="name, id, model"
          onChange={(event) => setTyped(event.target.value)}
        />
      </label>
      <span className="muted" data-count="runs">
        {shown} of {total} runs
      </span>
    </div>
  );
}

/** The column heads: each sorts the list by its column, the second click the other way. */
function RunsHead({ sort, dir }: { sort: SortKey; dir: 'asc' | 'desc' }) {
  return (
    <thead>
      <tr>
        <th aria-label="select for comparison" />
        {COLUMNS.map((column) => (
          <th
            key={column.key}
            className={column.numeric ? 'num' : ''}
            aria-sort={sort === column.key ? (dir === 'asc' ? 'ascending' : 'descending') : 'none'}
          >
            <button
              type="button"
              className="sort"
              onClick={() =>
                setQuery({
                  sort: column.key,
                  dir: sort === column.key && dir === 'desc' ? 'asc' : 'desc',
                })
              }
            >
              {column.label}
              {sort === column.key ? (dir === 'asc' ? ' ▲' : ' ▼') : ''}
            </button>
          </th>
        ))}
      </tr>
    </thead>
  );
}

/** One run: chosen for comparison or not, its progress, and its success rate in its own terms. */
function RunLine({
  run,
  selected,
  onToggle,
}: {
  run: RunListRow;
  selected: boolean;
  onToggle: () => void;
}) {
  const display = benchmarkView(run.benchmark);
  return (
    <tr data-run={run.run_id}>
      <td>
        <input
          type="checkbox"
          aria-label={`select ${run.name}`}
          checked={selected}
          onChange={onToggle}
        />
      </td>
      <td>
        <Link href={`/runs/${encodeURIComponent(run.run_id)}`}>{run.name}</Link>
        <div className="muted small">{run.run_id}</div>
      </td>
      <td>{run.benchmark}</td>
      <td>{modelOrAgent(run.model, run.agent)}</td>
      <td>
        <span className={`status status-${run.run_status}`}>{run.run_status}</span>
        <RunHaltLine run={run} />
      </td>
      <td className="num nowrap" data-cell="progress" title={runProgress(run).text}>
        <progress max={run.total || 1} value={ran(run)} /> {ran(run)}/{run.total}
        {run.never_started > 0 && (
          <div className="muted small">{run.never_started} never started</div>
        )}
      </td>
      <td className="num" data-cell="success-rate">
        {percent(run.success_rate)}
        <div className="muted small">{display.successLabel}</div>
        <RunScoresLines run={run} />
        {display.grade && (run.graded ?? 0) > 0 && (
          <div data-cell="graded" title={display.grade.meaning}>
            {percent(run.graded_success_rate)}{' '}
            <span className="muted small">
              {display.grade.label} ({run.scored} scored)
            </span>
          </div>
        )}
        {!run.summarised && (
          <span
            className="provisional small"
            title="provisional until the aggregate summary exists"
          >
            provisional
          </span>
        )}
      </td>
      <td className="num">{decimal(run.avg_reward)}</td>
      <td className="nowrap">{timestamp(run.started_at ?? run.created_at)}</td>
      <td className="num nowrap">{duration(spanSeconds(run.started_at, run.finished_at))}</td>
      <RunCostCell run={run} />
    </tr>
  );
}
