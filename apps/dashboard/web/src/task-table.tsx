import {
  useEffect,
  useLayoutEffect,
  useMemo,
  useRef,
  useState,
  type KeyboardEvent,
  type ReactNode,
  type RefObject,
} from 'react';
import {
  flexRender,
  getCoreRowModel,
  getSortedRowModel,
  useReactTable,
  type ColumnDef,
  type Row,
  type SortingState,
  type Table,
} from '@tanstack/react-table';
import { useVirtualizer, type Virtualizer } from '@tanstack/react-virtual';
import { useQuery, keepPreviousData } from '@tanstack/react-query';
import type { CsvColumn } from '../../shared/csv';
import { apiGet, type SearchResponse, type ShownQuery, type TaskRow } from './api';
import { CsvButton } from './csv-button';
import { decimal, duration, usd } from './format';
import { navigate, setQuery, useLocation, useQueryText } from './router';

const ROW_HEIGHT = 30;

/** A task's grade as a cell: its score, `no score`, or `–` for a task with no grade. */
const gradeText = (task: TaskRow) =>
  task.graded
    ? task.grade === null || task.grade === undefined
      ? 'no score'
      : decimal(task.grade)
    : '–';

const COLUMNS: ColumnDef<TaskRow>[] = [
  { accessorKey: 'seq', header: '#', size: 60 },
  { accessorKey: 'task_id', header: 'Task', size: 220 },
  { accessorKey: 'domain', header: 'Domain', size: 130 },
  { accessorKey: 'instruction', header: 'Instruction', size: 320 },
  {
    accessorKey: 'status',
    header: 'Status',
    size: 90,
    cell: (info) => (
      <span className={`status status-${String(info.getValue())}`}>{String(info.getValue())}</span>
    ),
  },
  { accessorKey: 'final_api_status', header: 'Final status', size: 120 },
  { accessorKey: 'success', header: 'Success', size: 76, cell: (info) => yesNo(info.getValue()) },
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

function yesNo(value: unknown): string {
  return value === true ? 'yes' : value === false ? 'no' : '–';
}

/** Which sample of its task a row is, after Task, for a run of several epochs. */
const EPOCH_COLUMN: ColumnDef<TaskRow> = { accessorKey: 'epoch', header: 'Epoch', size: 64 };

/** The epoch's column when the run has epochs; the grade's, after Success, for a graded run. */
function columnsFor(gradeLabel: string | null, epochs: boolean): ColumnDef<TaskRow>[] {
  const base = epochs ? [...COLUMNS.slice(0, 2), EPOCH_COLUMN, ...COLUMNS.slice(2)] : COLUMNS;
  if (!gradeLabel) return base;
  const at = base.findIndex(
    (column) => 'accessorKey' in column && column.accessorKey === 'success',
  );
  const grade: ColumnDef<TaskRow> = {
    id: 'grade',
    accessorFn: (task) => (task.graded ? (task.grade ?? -1) : -2),
    header: gradeLabel,
    size: 80,
    cell: (info) => gradeText(info.row.original),
  };
  return [...base.slice(0, at + 1), grade, ...base.slice(at + 1)];
}

/** The CSV of the table: every column, by its field name, values as recorded. */
function csvColumns(graded: boolean): CsvColumn<TaskRow>[] {
  const field = (key: keyof TaskRow): CsvColumn<TaskRow> => ({
    label: key,
    value: (task) => task[key],
  });
  return [
    ...(
      ['seq', 'task_id', 'domain', 'instruction', 'status', 'final_api_status', 'success'] as const
    ).map(field),
    ...(graded
      ? [
          { label: 'graded', value: (task: TaskRow) => task.graded ?? false },
          { label: 'grade', value: (task: TaskRow) => task.grade ?? null },
        ]
      : []),
    ...(['total_steps', 'reward', 'duration_ms', 'attempts', 'cost_usd', 'error'] as const).map(
      field,
    ),
  ];
}

function numberOrUndefined(value: string | null): number | undefined {
  if (value === null || value.trim() === '') return undefined;
  const parsed = Number(value);
  return Number.isFinite(parsed) ? parsed : undefined;
}

/** The URL's query parameter of each filter. */
const FILTER_PARAMS = {
  search: 'q',
  status: 'status',
  domain: 'domain',
  error: 'error',
  task: 'task',
  stepsMin: 'steps_min',
  stepsMax: 'steps_max',
  rewardMin: 'reward_min',
  rewardMax: 'reward_max',
} as const;

type TaskFilters = Record<keyof typeof FILTER_PARAMS, string>;

/** The test a task must pass, with the filters parsed once for all 20,000 rows. */
function matcher(
  filters: TaskFilters,
  found: ReadonlySet<string> | undefined,
): (task: TaskRow) => boolean {
  const error = filters.error.toLowerCase();
  const id = filters.task.toLowerCase();
  const stepsMin = numberOrUndefined(filters.stepsMin);
  const stepsMax = numberOrUndefined(filters.stepsMax);
  const rewardMin = numberOrUndefined(filters.rewardMin);
  const rewardMax = numberOrUndefined(filters.rewardMax);
  return (task) =>
    (found === undefined || found.has(task.task_id)) &&
    (!filters.status || task.status === filters.status) &&
    (!filters.domain || task.domain === filters.domain) &&
    (!error || (task.error ?? '').toLowerCase().includes(error)) &&
    (!id || task.task_id.toLowerCase().includes(id)) &&
    (stepsMin === undefined || task.total_steps >= stepsMin) &&
    (stepsMax === undefined || task.total_steps <= stepsMax) &&
    (rewardMin === undefined || (task.reward ?? 0) >= rewardMin) &&
    (rewardMax === undefined || (task.reward ?? 0) <= rewardMax);
}

/**
 * The run's tasks the full-text search (`q`) matched, from the server's index; undefined without a
 * search. While a new search runs, the previous answer stays.
 */
function useTaskSearch(runId: string, text: string) {
  const q = text.trim();
  const search = useQuery({
    queryKey: ['run', runId, 'search', q],
    queryFn: () =>
      apiGet<SearchResponse>(
        `/api/runs/${encodeURIComponent(runId)}/search?q=${encodeURIComponent(q)}`,
      ),
    enabled: q !== '',
    placeholderData: keepPreviousData,
  });
  const found = useMemo(
    () => (q && search.data ? new Set(search.data.task_ids) : undefined),
    [q, search.data],
  );
  return { found, query: q ? search.data?.query : undefined, pending: q !== '' && !search.data };
}

/** The URL's filters and the tasks that pass them, filtered again only when a filter changes. */
function useFilteredTasks(
  runId: string,
  tasks: TaskRow[],
): { filters: TaskFilters; filtered: TaskRow[]; search: ReturnType<typeof useTaskSearch> } {
  const { query } = useLocation();
  const filters = Object.fromEntries(
    Object.entries(FILTER_PARAMS).map(([key, param]) => [key, query.get(param) ?? '']),
  ) as TaskFilters;
  const search = useTaskSearch(runId, filters.search);
  const filtered = useMemo(
    () => tasks.filter(matcher(filters, search.found)),
    // The filter values, not the object (a new one each render): 20,000 rows re-filter only on a change.
    [
      tasks,
      search.found,
      filters.status,
      filters.domain,
      filters.error,
      filters.task,
      filters.stepsMin,
      filters.stepsMax,
      filters.rewardMin,
      filters.rewardMax,
    ],
  );
  return { filters, filtered, search };
}

/** The sort in the URL, as the table's state: the same array until the URL changes. */
function useUrlSorting(): SortingState {
  const { query } = useLocation();
  const sortColumn = query.get('sort');
  const sortDescending = query.get('dir') === 'desc';
  // A new array on every render would make the table re-sort and reset its state in a loop.
  return useMemo(
    () => (sortColumn ? [{ id: sortColumn, desc: sortDescending }] : []),
    [sortColumn, sortDescending],
  );
}

function SearchField({
  label,
  name,
  size,
  placeholder,
  title,
}: {
  label: string;
  name: string;
  size: number;
  placeholder?: string;
  title?: string;
}) {
  const [text, setText] = useQueryText(name);
  return (
    <label title={title}>
      {label}{' '}
      <input
        name={name}
        type="search"
        size={size}
        placeholder={placeholder}
        value={text}
        onChange={(event) => setText(event.target.value)}
      />
    </label>
  );
}

/** A min–max pair kept in the URL as `<name>_min` and `<name>_max`. */
function RangeField({
  label,
  name,
  inputMode,
}: {
  label: string;
  name: string;
  inputMode: 'numeric' | 'decimal';
}) {
  const [min, setMin] = useQueryText(`${name}_min`);
  const [max, setMax] = useQueryText(`${name}_max`);
  return (
    <label>
      {label}{' '}
      <input
        name={`${name}_min`}
        inputMode={inputMode}
        size={3}
        placeholder="min"
        value={min}
        onChange={(event) => setMin(event.target.value)}
      />
      –
      <input
        name={`${name}_max`}
        inputMode={inputMode}
        size={3}
        placeholder="max"
        value={max}
        onChange={(event) => setMax(event.target.value)}
      />
    </label>
  );
}

function FilterBar({
  filters,
  domains,
  shown,
  total,
  searching,
  csv,
}: {
  filters: TaskFilters;
  domains: string[];
  shown: number;
  total: number;
  searching: boolean;
  csv: ReactNode;
}) {
  return (
    <div className="filters" role="search">
      <SearchField
        label="Search"
        name="q"
        size={18}
        placeholder="instruction, answer, error"
        title={
          'Full text over instructions, answers and errors (English stemming): words, "a phrase", or, -word'
        }
      />
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
      <SearchField label="Task" name="task" size={12} />
      <SearchField label="Error text" name="error" size={16} />
      <RangeField label="Steps" name="steps" inputMode="numeric" />
      <RangeField label="Reward" name="reward" inputMode="decimal" />
      <span className="muted" data-count="tasks">
        {searching ? 'searching… ' : ''}
        {shown} of {total} tasks
      </span>
      {csv}
    </div>
  );
}

/** Each header's label with its sort arrow must fit whatever font the browser picked: measured once. */
function useHeaderWidths(head: RefObject<HTMLDivElement | null>): number[] {
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
  }, [head]);
  return headerWidths;
}

/** The active row and the keys that move it (↑/↓, j/k, PgUp/PgDn, Home/End) or open it (Enter). */
function useGridKeys(
  count: number,
  scroller: RefObject<HTMLDivElement | null>,
  virtualizer: Virtualizer<HTMLDivElement, Element>,
  open: (index: number) => void,
) {
  const [active, setActive] = useState(0);
  useEffect(() => setActive((current) => Math.min(current, Math.max(count - 1, 0))), [count]);
  const move = (index: number) => {
    const next = Math.max(0, Math.min(count - 1, index));
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
      End: () => move(count - 1),
      Enter: () => open(active),
    };
    const action = keys[event.key];
    if (action) {
      event.preventDefault();
      action();
    }
  };
  return { active, setActive, onKey };
}

const sortArrow = (sorted: false | 'asc' | 'desc') =>
  sorted === 'asc' ? ' ▲' : sorted === 'desc' ? ' ▼' : '';

function GridHead({
  table,
  template,
  head,
}: {
  table: Table<TaskRow>;
  template: string;
  head: RefObject<HTMLDivElement | null>;
}) {
  return (
    <div className="vgrid-head" role="row" ref={head} style={{ gridTemplateColumns: template }}>
      {table.getFlatHeaders().map((header) => {
        const sorted = header.column.getIsSorted();
        return (
          <div
            key={header.id}
            role="columnheader"
            aria-sort={sorted === 'asc' ? 'ascending' : sorted === 'desc' ? 'descending' : 'none'}
          >
            <button
              type="button"
              className="sort"
              onClick={header.column.getToggleSortingHandler()}
              data-sort={header.id}
            >
              {flexRender(header.column.columnDef.header, header.getContext())}
              {sortArrow(sorted)}
            </button>
          </div>
        );
      })}
    </div>
  );
}

function GridRow({
  row,
  index,
  start,
  active,
  template,
  onClick,
}: {
  row: Row<TaskRow>;
  index: number;
  start: number;
  active: boolean;
  template: string;
  onClick: () => void;
}) {
  return (
    <div
      id={`task-row-${index}`}
      role="row"
      aria-rowindex={index + 2}
      aria-selected={active}
      data-task={row.original.task_id}
      className={`vgrid-row${active ? ' active' : ''}`}
      style={{
        transform: `translateY(${start}px)`,
        height: ROW_HEIGHT,
        gridTemplateColumns: template,
      }}
      onClick={onClick}
    >
      {row.getVisibleCells().map((cell) => (
        <div
          key={cell.id}
          role="gridcell"
          data-column={cell.column.id}
          title={
            cell.column.id === 'error' || cell.column.id === 'instruction'
              ? String(cell.getValue() ?? '')
              : undefined
          }
        >
          {flexRender(cell.column.columnDef.cell, cell.getContext())}
        </div>
      ))}
    </div>
  );
}

/** All tasks of a run, virtualised: filters and sort live in the URL; ↑/↓, PgUp/PgDn, Home/End and Enter work. */
export function TaskTable({
  runId,
  tasks,
  gradeLabel,
  onSearchQuery,
}: {
  runId: string;
  tasks: TaskRow[];
  /** The benchmark's grade, shown as a column once a task of the run has one. */
  gradeLabel: string | null;
  /** The search's SQL, for the panel's "Show SQL", while a search is on. */
  onSearchQuery?: (query: ShownQuery | undefined) => void;
}) {
  const { filters, filtered, search } = useFilteredTasks(runId, tasks);
  useEffect(() => onSearchQuery?.(search.query), [search.query, onSearchQuery]);
  const sorting = useUrlSorting();
  const domains = useMemo(() => [...new Set(tasks.map((task) => task.domain))].sort(), [tasks]);
  const graded = useMemo(
    () => gradeLabel !== null && tasks.some((task) => task.graded),
    [gradeLabel, tasks],
  );
  const epochs = useMemo(() => tasks.some((task) => task.epoch > 1), [tasks]);
  const columns = useMemo(
    () => columnsFor(graded ? gradeLabel : null, epochs),
    [graded, gradeLabel, epochs],
  );
  const table = useReactTable({
    data: filtered,
    columns,
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
  const open = (index: number) => {
    const task = rows[index]?.original;
    if (task)
      navigate(`/runs/${encodeURIComponent(runId)}/tasks/${encodeURIComponent(task.task_id)}`);
  };
  const { active, setActive, onKey } = useGridKeys(rows.length, scroller, virtualizer, open);
  const head = useRef<HTMLDivElement>(null);
  const headerWidths = useHeaderWidths(head);
  const template = table
    .getAllLeafColumns()
    .map((column, i) => `${Math.max(column.getSize(), headerWidths[i] ?? 0)}px`)
    .join(' ');

  return (
    <div className="task-table" data-table="tasks">
      <FilterBar
        filters={filters}
        domains={domains}
        shown={rows.length}
        total={tasks.length}
        searching={search.pending}
        csv={
          <CsvButton
            name="tasks"
            fileName={`${runId}-tasks.csv`}
            columns={csvColumns(graded)}
            rows={() => table.getRowModel().rows.map((row) => row.original)}
          />
        }
      />
      <div className="vgrid" role="grid" aria-rowcount={rows.length + 1} aria-label="tasks">
        <GridHead table={table} template={template} head={head} />
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
              return row ? (
                <GridRow
                  key={row.id}
                  row={row}
                  index={item.index}
                  start={item.start}
                  active={item.index === active}
                  template={template}
                  onClick={() => {
                    setActive(item.index);
                    open(item.index);
                  }}
                />
              ) : null;
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
