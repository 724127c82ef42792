import {
  reSplitAlphaNumeric,
  sortingFns,
  type BuiltInSortingFn,
  type ColumnDef,
  type Row,
  type SortingFn,
  type SortingState,
} from '@tanstack/table-core';

// A table's rows in the order TanStack Table's sorted row model gives them, without the Row
// objects it builds for every row (a few dozen functions each: about a second for the 60,000
// samples of a 20,000-task run of 3 epochs). The task table sorts here and hands TanStack only the
// rows on screen. The rules are TanStack's (v8), so a click on a header orders as it did:
// - a column's own `sortingFn`, else one picked from its values: TanStack looks at the rows from
//   the eleventh on, not the first ten (its `flatRows.slice(10)`), a Date giving `datetime`, a
//   string with digits in it `alphanumeric`, other strings `text`, anything else `basic`;
// - `undefined` sorts after every value ascending and before them descending (`sortUndefined: 1`);
// - ties keep the rows' order.

/** What a column contributes to sorting: its id, how to read its value, its sorting function. */
interface SortColumn<T> {
  id: string;
  value: (row: T) => unknown;
  sortingFn: ColumnDef<T>['sortingFn'];
  invert: boolean;
}

function sortColumnOf<T>(column: ColumnDef<T>): SortColumn<T> | undefined {
  if (column.enableSorting === false) return undefined;
  const key = 'accessorKey' in column ? String(column.accessorKey) : undefined;
  const id = column.id ?? key;
  const read = 'accessorFn' in column ? column.accessorFn : undefined;
  if (id === undefined || (read === undefined && key === undefined)) return undefined;
  return {
    id,
    value: read ? (row: T) => read(row, 0) : (row: T) => (row as Record<string, unknown>)[key!],
    sortingFn: column.sortingFn,
    invert: column.invertSorting === true,
  };
}

/** A stand-in for TanStack's Row: its sorting functions read only `getValue`. */
type ValueRow<T> = Row<T> & { readonly at: number };

function valueRows<T>(rows: readonly T[], column: SortColumn<T>): ValueRow<T>[] {
  return rows.map((original, at) => {
    const value = column.value(original);
    return { at, original, getValue: () => value } as unknown as ValueRow<T>;
  });
}

function autoSortingFn<T>(rows: readonly ValueRow<T>[]): SortingFn<T> {
  let isString = false;
  for (const row of rows.slice(10)) {
    const value = row.getValue<unknown>('');
    if (Object.prototype.toString.call(value) === '[object Date]') return sortingFns.datetime;
    if (typeof value === 'string') {
      isString = true;
      if (value.split(reSplitAlphaNumeric).length > 1) return sortingFns.alphanumeric;
    }
  }
  return isString ? sortingFns.text : sortingFns.basic;
}

function sortingFnOf<T>(column: SortColumn<T>, rows: readonly ValueRow<T>[]): SortingFn<T> {
  const declared = column.sortingFn;
  if (typeof declared === 'function') return declared;
  if (declared === undefined || declared === 'auto') return autoSortingFn(rows);
  const builtIn = sortingFns[declared as BuiltInSortingFn] as SortingFn<T> | undefined;
  if (!builtIn) throw new Error(`unknown sorting function '${String(declared)}'`);
  return builtIn;
}

/** `rows` in the order TanStack's sorted row model gives for `sorting` (its first sort only, as the table keeps one). */
export function sortRows<T>(
  rows: readonly T[],
  sorting: SortingState,
  columns: readonly ColumnDef<T>[],
): readonly T[] {
  const byId = new Map(
    columns.flatMap((column) => {
      const sortable = sortColumnOf(column);
      return sortable ? [[sortable.id, sortable] as const] : [];
    }),
  );
  const entry = sorting.find((sort) => byId.has(sort.id));
  if (!entry || rows.length === 0) return rows;
  const column = byId.get(entry.id)!;
  const wrapped = valueRows(rows, column);
  const compare = sortingFnOf(column, wrapped);
  const sign = (entry.desc ? -1 : 1) * (column.invert ? -1 : 1);
  wrapped.sort((a, b) => {
    const aValue = a.getValue<unknown>(column.id);
    const bValue = b.getValue<unknown>(column.id);
    let order = 0;
    if (aValue === undefined || bValue === undefined)
      order = aValue === undefined && bValue === undefined ? 0 : aValue === undefined ? 1 : -1;
    if (order === 0) order = compare(a, b, column.id);
    return order !== 0 ? order * sign : a.at - b.at;
  });
  return wrapped.map((row) => row.original);
}
