import { useEffect, useLayoutEffect, useMemo, useRef, useState, type KeyboardEvent } from 'react';
import {
  flexRender,
  getCoreRowModel,
  getSortedRowModel,
  useReactTable,
  type ColumnDef,
  type SortingState,
} from '@tanstack/react-table';
import { useVirtualizer } from '@tanstack/react-virtual';
import type { TaskRow } from './api';
import { decimal, duration, usd } from './format';
import { navigate, setQuery, useLocation, useQueryText } from './router';

const ROW_HEIGHT = 30;

const COLUMNS: ColumnDef<TaskRow>[] = [
  { accessorKey: 'seq', header: '#', size: 60 },
  { accessorKey: 'task_id', header: 'Task', size: 220 },
  { accessorKey: 'domain', header: 'Domain', size: 130 },
  {
    accessorKey: 'status',
    header: 'Status',
    size: 90,
    cell: (info) => (
      <span className={`status status-${String(info.getValue())}`}>{String(info.getValue())}</span>
    ),
  },
  { accessorKey: 'final_api_status', header: 'Final status', size: 120 },
  { accessorKey: 'total_steps', header: 'Steps', size: 64 },
  {
    accessorKey: 'reward',
    header: 'Reward',
    size: 74,
    cell: (info) => decimal(info.getValue() as number | null),
  },
  {
    accessorKey: 'duration_ms',
    header: 'Duration',
    size: 86,
    cell: (info) => duration(info.getValue() === null ? null : Number(info.getValue()) / 1000),
  },
  { accessorKey: 'attempts', header: 'Attempts', size: 76 },
  {
    accessorKey: 'cost_usd',
    header: 'Cost',
    size: 70,
    cell: (info) => usd(info.getValue() as number),
  },
  { accessorKey: 'error', header: 'Error', size: 320, enableSorting: true },
];

function numberOrUndefined(value: string | null): number | undefined {
  if (value === null || value.trim() === '') return undefined;
  const parsed = Number(value);
  return Number.isFinite(parsed) ? parsed : undefined;
}

/** All tasks of a run, virtualised: filters and sort live in the URL; ↑/↓, PgUp/PgDn, Home/End and Enter work. */
export function TaskTable({ runId, tasks }: { runId: string; tasks: TaskRow[] }) {
  const { query } = useLocation();
  const fields = {
    error: useQueryText('error'),
    task: useQueryText('task'),
    stepsMin: useQueryText('steps_min'),
    stepsMax: useQueryText('steps_max'),
    rewardMin: useQueryText('reward_min'),
    rewardMax: useQueryText('reward_max'),
  };
  const filters = {
    status: query.get('status') ?? '',
    domain: query.get('domain') ?? '',
    error: query.get('error') ?? '',
    task: query.get('task') ?? '',
    stepsMin: query.get('steps_min') ?? '',
    stepsMax: query.get('steps_max') ?? '',
    rewardMin: query.get('reward_min') ?? '',
    rewardMax: query.get('reward_max') ?? '',
  };
  const sortColumn = query.get('sort');
  const sortDescending = query.get('dir') === 'desc';
  // A new array on every render would make the table re-sort and reset its state in a loop.
  const sorting: SortingState = useMemo(
    () => (sortColumn ? [{ id: sortColumn, desc: sortDescending }] : []),
    [sortColumn, sortDescending],
  );
  const domains = useMemo(() => [...new Set(tasks.map((task) => task.domain))].sort(), [tasks]);
  const filtered = useMemo(() => {
    const error = filters.error.toLowerCase();
    const id = filters.task.toLowerCase();
    const stepsMin = numberOrUndefined(filters.stepsMin);
    const stepsMax = numberOrUndefined(filters.stepsMax);
    const rewardMin = numberOrUndefined(filters.rewardMin);
    const rewardMax = numberOrUndefined(filters.rewardMax);
    return tasks.filter(
      (task) =>
        (!filters.status || task.status === filters.status) &&
        (!filters.domain || task.domain === filters.domain) &&
        (!error || (task.error ?? '').toLowerCase().includes(error)) &&
        (!id || task.task_id.toLowerCase().includes(id)) &&
        (stepsMin === undefined || task.total_steps >= stepsMin) &&
        (stepsMax === undefined || task.total_steps <= stepsMax) &&
        (rewardMin === undefined || (task.reward ?? 0) >= rewardMin) &&
        (rewardMax === undefined || (task.reward ?? 0) <= rewardMax),
    );
  }, [
    tasks,
    filters.status,
    filters.domain,
    filters.error,
    filters.task,
    filters.stepsMin,
    filters.stepsMax,
    filters.rewardMin,
    filters.rewardMax,
  ]);

  const table = useReactTable({
    data: filtered,
    columns: COLUMNS,
    state: { sorting },
    onSortingChange: (updater) => {
      const next = typeof updater === 'function' ? updater(sorting) : updater;
      setQuery({ sort: next[0]?.id, dir: next[0] ? (next[0].desc ? 'desc' : 'asc') : null });
    },
    getCoreRowModel: getCoreRowModel(),
    getSortedRowModel: getSortedRowModel(),
    sortDescFirst: false,
    autoResetAll: false,
  });
  const rows = table.getRowModel().rows;
  const scroller = useRef<HTMLDivElement>(null);
  const virtualizer = useVirtualizer({
    count: rows.length,
    getScrollElement: () => scroller.current,
    estimateSize: () => ROW_HEIGHT,
    overscan: 12,
  });
  const [active, setActive] = useState(0);
  useEffect(
    () => setActive((current) => Math.min(current, Math.max(rows.length - 1, 0))),
    [rows.length],
  );

  const open = (index: number) => {
    const task = rows[index]?.original;
    if (task)
      navigate(`/runs/${encodeURIComponent(runId)}/tasks/${encodeURIComponent(task.task_id)}`);
  };
  const move = (index: number) => {
    const next = Math.max(0, Math.min(rows.length - 1, index));
    setActive(next);
    virtualizer.scrollToIndex(next, { align: 'auto' });
  };
  const onKey = (event: KeyboardEvent<HTMLDivElement>) => {
    const page = Math.max(1, Math.floor((scroller.current?.clientHeight ?? 300) / ROW_HEIGHT) - 1);
    const keys: Record<string, () => void> = {
      ArrowDown: () => move(active + 1),
      ArrowUp: () => move(active - 1),
      j: () => move(active + 1),
      k: () => move(active - 1),
      PageDown: () => move(active + page),
      PageUp: () => move(active - page),
      Home: () => move(0),
      End: () => move(rows.length - 1),
      Enter: () => open(active),
    };
    const action = keys[event.key];
    if (action) {
      event.preventDefault();
      action();
    }
  };
  // A header's label with its sort arrow must fit whatever font the browser picked: measured once.
  const head = useRef<HTMLDivElement>(null);
  const [headerWidths, setHeaderWidths] = useState<number[]>([]);
  useLayoutEffect(() => {
    const context = document.createElement('canvas').getContext('2d');
    const buttons = head.current?.querySelectorAll<HTMLButtonElement>('button.sort');
    if (!context || !buttons) return;
    setHeaderWidths(
      [...buttons].map((button) => {
        const style = getComputedStyle(button);
        const cell = getComputedStyle(button.parentElement ?? button);
        context.font = style.font;
        const label = (button.textContent ?? '').replace(/ [▲▼]$/, '');
        return Math.ceil(
          context.measureText(`${label} ▼`).width +
            parseFloat(cell.paddingLeft) +
            parseFloat(cell.paddingRight) +
            2,
        );
      }),
    );
  }, []);
  const widths = table
    .getAllLeafColumns()
    .map((column, i) => Math.max(column.getSize(), headerWidths[i] ?? 0));
  const template = widths.map((width) => `${width}px`).join(' ');

  return (
    <div className="task-table" data-table="tasks">
      <div className="filters" role="search">
        <label>
          Status{' '}
          <select
            name="status"
            value={filters.status}
            onChange={(event) => setQuery({ status: event.target.value })}
          >
            <option value="">all</option>
            {['queued', 'running', 'success', 'failed', 'cancelled', 'error'].map((status) => (
              <option key={status}>{status}</option>
            ))}
          </select>
        </label>
        <label>
          Domain{' '}
          <select
            name="domain"
            value={filters.domain}
            onChange={(event) => setQuery({ domain: event.target.value })}
          >
            <option value="">all</option>
            {domains.map((domain) => (
              <option key={domain}>{domain}</option>
            ))}
          </select>
        </label>
        <label>
          Task{' '}
          <input
            name="task"
            type="search"
            size={12}
            value={fields.task[0]}
            onChange={(event) => fields.task[1](event.target.value)}
          />
        </label>
        <label>
          Error text{' '}
          <input
            name="error"
            type="search"
            size={16}
            value={fields.error[0]}
            onChange={(event) => fields.error[1](event.target.value)}
          />
        </label>
        <label>
          Steps{' '}
          <input
            name="steps_min"
            inputMode="numeric"
            size={3}
            placeholder="min"
            value={fields.stepsMin[0]}
            onChange={(event) => fields.stepsMin[1](event.target.value)}
          />
          –
          <input
            name="steps_max"
            inputMode="numeric"
            size={3}
            placeholder="max"
            value={fields.stepsMax[0]}
            onChange={(event) => fields.stepsMax[1](event.target.value)}
          />
        </label>
        <label>
          Reward{' '}
          <input
            name="reward_min"
            inputMode="decimal"
            size={3}
            placeholder="min"
            value={fields.rewardMin[0]}
            onChange={(event) => fields.rewardMin[1](event.target.value)}
          />
          –
          <input
            name="reward_max"
            inputMode="decimal"
            size={3}
            placeholder="max"
            value={fields.rewardMax[0]}
            onChange={(event) => fields.rewardMax[1](event.target.value)}
          />
        </label>
        <span className="muted" data-count="tasks">
          {rows.length} of {tasks.length} tasks
        </span>
      </div>
      <div className="vgrid" role="grid" aria-rowcount={rows.length + 1} aria-label="tasks">
        <div className="vgrid-head" role="row" ref={head} style={{ gridTemplateColumns: template }}>
          {table.getFlatHeaders().map((header) => (
            <div
              key={header.id}
              role="columnheader"
              aria-sort={
                header.column.getIsSorted() === 'asc'
                  ? 'ascending'
                  : header.column.getIsSorted() === 'desc'
                    ? 'descending'
                    : 'none'
              }
            >
              <button
                type="button"
                className="sort"
                onClick={header.column.getToggleSortingHandler()}
                data-sort={header.id}
              >
                {flexRender(header.column.columnDef.header, header.getContext())}
                {header.column.getIsSorted() === 'asc'
                  ? ' ▲'
                  : header.column.getIsSorted() === 'desc'
                    ? ' ▼'
                    : ''}
              </button>
            </div>
          ))}
        </div>
        <div
          ref={scroller}
          className="vgrid-body"
          tabIndex={0}
          onKeyDown={onKey}
          aria-activedescendant={rows[active] ? `task-row-${active}` : undefined}
        >
          <div style={{ height: virtualizer.getTotalSize(), position: 'relative' }}>
            {virtualizer.getVirtualItems().map((item) => {
              const row = rows[item.index];
              if (!row) return null;
              return (
                <div
                  key={row.id}
                  id={`task-row-${item.index}`}
                  role="row"
                  aria-rowindex={item.index + 2}
                  aria-selected={item.index === active}
                  data-task={row.original.task_id}
                  className={`vgrid-row${item.index === active ? ' active' : ''}`}
                  style={{
                    transform: `translateY(${item.start}px)`,
                    height: ROW_HEIGHT,
                    gridTemplateColumns: template,
                  }}
                  onClick={() => {
                    setActive(item.index);
                    open(item.index);
                  }}
                >
                  {row.getVisibleCells().map((cell) => (
                    <div
                      key={cell.id}
                      role="gridcell"
                      title={cell.column.id === 'error' ? String(cell.getValue() ?? '') : undefined}
                    >
                      {flexRender(cell.column.columnDef.cell, cell.getContext())}
                    </div>
                  ))}
                </div>
              );
            })}
          </div>
        </div>
      </div>
      <p className="muted small">
        Keys: ↑/↓ or j/k move, PgUp/PgDn, Home/End, Enter opens the trajectory.
      </p>
    </div>
  );
}
