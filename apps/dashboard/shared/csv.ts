// CSV as RFC 4180 writes it: fields separated by commas, records by CRLF, a header record first;
// a field holding a comma, a double quote, CR or LF is quoted and its quotes doubled. Shared so the
// browser builds the file from the rows a table shows, as filtered and sorted.

export interface CsvColumn<R> {
  label: string;
  value: (row: R) => unknown;
}

/** A value as CSV field text: empty for null, JSON for objects, as written otherwise. */
function fieldText(value: unknown): string {
  if (value === null || value === undefined) return '';
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint')
    return String(value);
  return JSON.stringify(value) ?? '';
}

export function csvField(value: unknown): string {
  const text = fieldText(value);
  return /[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

export function toCsv<R>(columns: readonly CsvColumn<R>[], rows: readonly R[]): string {
  const records = [
    columns.map((column) => csvField(column.label)).join(','),
    ...rows.map((row) => columns.map((column) => csvField(column.value(row))).join(',')),
  ];
  return `${records.join('\r\n')}\r\n`;
}
