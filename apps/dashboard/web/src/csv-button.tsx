import { toCsv, type CsvColumn } from '../../shared/csv';

// A table's rows as a CSV file, built in the browser from exactly what the table holds (its filter
// and sort applied), so the file and the screen never disagree.

export function CsvButton<R>({
  name,
  fileName,
  columns,
  rows,
}: {
  /** The button's `data-csv`. */
  name: string;
  fileName: string;
  columns: readonly CsvColumn<R>[];
  rows: () => readonly R[];
}) {
  const download = () => {
    const blob = new Blob([toCsv(columns, rows())], { type: 'text/csv;charset=utf-8' });
    const url = URL.createObjectURL(blob);
    const link = document.createElement('a');
    link.href = url;
    link.download = fileName.replace(/[^A-Za-z0-9._-]/g, '_');
    document.body.append(link);
    link.click();
    link.remove();
    setTimeout(() => URL.revokeObjectURL(url), 10_000);
  };
  return (
    <button type="button" className="csv" data-csv={name} onClick={download}>
      CSV
    </button>
  );
}
