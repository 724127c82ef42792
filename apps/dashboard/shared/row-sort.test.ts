import {
  createTable,
  getCoreRowModel,
  getSortedRowModel,
  type ColumnDef,
  type SortingState,
  type TableState,
} from '@tanstack/table-core';
import { describe, expect, it } from 'vitest';
import { sortRows } from './row-sort.js';

interface Sample {
  n: number | null;
  task: string;
  word: string | undefined;
  flag: boolean | null;
  when: Date;
  grade?: number | null;
}

const COLUMNS: ColumnDef<Sample>[] = [
  { accessorKey: 'n' },
  { accessorKey: 'task' },
  { accessorKey: 'word' },
  { accessorKey: 'flag' },
  { accessorKey: 'when' },
  { id: 'grade', accessorFn: (row) => (row.grade === undefined ? -2 : (row.grade ?? -1)) },
  { accessorKey: 'n', id: 'n-inverted', invertSorting: true },
  { accessorKey: 'task', id: 'task-basic', sortingFn: 'basic' },
  { accessorKey: 'word', id: 'unsortable', enableSorting: false },
];

/** Rows with ties, nulls, undefined, digits inside strings and plain words, in a seeded order. */
function samples(count: number, seed: number): Sample[] {
  let state = seed;
  const next = (n: number) => {
    state = (state * 1103515245 + 12345) % 2147483648;
    return state % n;
  };
  const words = ['alpha', 'Beta', 'gamma', 'delta', ''];
  return Array.from({ length: count }, () => ({
    n: next(7) === 0 ? null : next(5) - 2,
    task: `task-${next(30)}.epoch${1 + next(3)}`,
    word: next(6) === 0 ? undefined : words[next(words.length)],
    flag: next(4) === 0 ? null : next(2) === 0,
    when: new Date(1_700_000_000_000 + next(5) * 1000),
    ...(next(3) === 0 ? {} : { grade: next(4) === 0 ? null : next(3) / 2 }),
  }));
}

/** The order TanStack Table's own sorted row model gives. */
function tanstackOrder(rows: Sample[], sorting: SortingState): Sample[] {
  let state = { sorting } as unknown as TableState;
  const table = createTable<Sample>({
    data: rows,
    columns: COLUMNS,
    state,
    onStateChange: (updater) => {
      state = typeof updater === 'function' ? updater(state) : updater;
    },
    renderFallbackValue: null,
    getCoreRowModel: getCoreRowModel(),
    getSortedRowModel: getSortedRowModel(),
  });
  table.setOptions((previous) => ({ ...previous, state: { ...table.initialState, sorting } }));
  return table.getRowModel().rows.map((row) => row.original);
}

describe('sortRows: the order of TanStack Table’s sorted row model, without its rows', () => {
  const ids = ['n', 'task', 'word', 'flag', 'when', 'grade', 'n-inverted', 'task-basic'];
  for (const id of ids)
    for (const desc of [false, true])
      it(`${id} ${desc ? 'descending' : 'ascending'}`, () => {
        for (const seed of [1, 7, 42]) {
          const rows = samples(200, seed);
          expect(sortRows(rows, [{ id, desc }], COLUMNS)).toEqual(
            tanstackOrder(rows, [{ id, desc }]),
          );
        }
      });

  it('leaves the rows as they are with no sort, a sort of a column it does not have, or one that cannot sort', () => {
    const rows = samples(50, 3);
    expect(sortRows(rows, [], COLUMNS)).toEqual(rows);
    expect(sortRows(rows, [{ id: 'nope', desc: false }], COLUMNS)).toEqual(rows);
    expect(sortRows(rows, [{ id: 'unsortable', desc: true }], COLUMNS)).toEqual(
      tanstackOrder(rows, [{ id: 'unsortable', desc: true }]),
    );
  });

  it('picks the sorting function from the rows after the tenth, as TanStack does', () => {
    // The first ten words have digits (alphanumeric would order "a10" after "a9"); the rest not.
    const rows = [
      ...Array.from({ length: 10 }, (_, i) => ({
        ...samples(1, i)[0]!,
        task: `a${[10, 9, 1, 2, 20, 3, 11, 4, 5, 6][i]}`,
      })),
      ...samples(20, 5).map((row, i) => ({ ...row, task: ['b', 'a', 'c'][i % 3]! })),
    ];
    const sorted = sortRows(rows, [{ id: 'task', desc: false }], COLUMNS).map((row) => row.task);
    expect(sorted).toEqual(
      tanstackOrder(rows, [{ id: 'task', desc: false }]).map((row) => row.task),
    );
    // text order, not alphanumeric: "a10" before "a9"
    expect(sorted.indexOf('a10')).toBeLessThan(sorted.indexOf('a9'));
  });
});
