import { useState } from 'react';
import type {
  TaskPanel,
  TaskPanelCell,
  TaskPanelTable,
  TaskPanelText,
} from '@benchfleet/benchmark-kit/task-panel';
import type { ShownQuery } from './api';
import { decimal } from './format';
import { Panel } from './sql-panel';

// The panels a benchmark fills for a task page (its `display.taskDetail`), drawn the same way for
// every benchmark: paragraphs, one table, the raw JSON behind them.

/** `data-<name>="value"` for a name a benchmark gave; no value, or anything but a plain name, gives nothing. */
function dataAttribute(
  name: string | undefined,
  value: string | undefined,
): Record<string, string> {
  return name && value !== undefined && /^[a-z][a-z0-9-]*$/.test(name)
    ? { [`data-${name}`]: value }
    : {};
}

function Text({ parts }: { parts: readonly TaskPanelText[] }) {
  return (
    <>
      {parts.map((part, i) =>
        typeof part === 'string' ? (
          <span key={i}>{part}</span>
        ) : 'code' in part ? (
          <code key={i}>{part.code}</code>
        ) : 'chip' in part ? (
          <span key={i} className="chip">
            {part.chip}
          </span>
        ) : (
          <span key={i} className="muted">
            <Text parts={part.muted} />
          </span>
        ),
      )}
    </>
  );
}

function cellText(cell: TaskPanelCell | undefined): string {
  if (cell === undefined) return '';
  return typeof cell === 'string' ? cell : decimal(cell);
}

function PanelTable({ table }: { table: TaskPanelTable }) {
  return (
    <table className="grid" {...dataAttribute('table', table.name)}>
      <thead>
        <tr>
          {table.columns.map((column) => (
            <th key={column.key} className={column.numeric ? 'num' : ''}>
              {column.label}
            </th>
          ))}
        </tr>
      </thead>
      <tbody>
        {table.rows.map((row) => (
          <tr
            key={row.key}
            className={row.total ? 'total' : ''}
            {...dataAttribute(table.rowAttribute, row.key)}
          >
            {table.columns.map((column) => (
              <td
                key={column.key}
                className={column.numeric ? 'num' : ''}
                {...dataAttribute(column.attribute, '')}
              >
                {cellText(row.cells[column.key])}
              </td>
            ))}
          </tr>
        ))}
      </tbody>
    </table>
  );
}

function BenchmarkPanel({ panel, queries }: { panel: TaskPanel; queries: ShownQuery[] }) {
  const [showRaw, setShowRaw] = useState(false);
  return (
    <Panel id={panel.id} title={panel.title} queries={queries}>
      {panel.paragraphs?.map((paragraph, i) => (
        <p key={i} {...dataAttribute('field', paragraph.field)}>
          <Text parts={paragraph.text} />
        </p>
      ))}
      {panel.table && <PanelTable table={panel.table} />}
      {panel.raw && (
        <>
          <button type="button" className="link" onClick={() => setShowRaw(!showRaw)}>
            {showRaw ? 'hide' : 'show'} the raw {panel.raw.label}
          </button>
          {showRaw && <pre className="json">{JSON.stringify(panel.raw.value, null, 2)}</pre>}
        </>
      )}
    </Panel>
  );
}

export function TaskPanels({ panels, queries }: { panels: TaskPanel[]; queries: ShownQuery[] }) {
  return (
    <>
      {panels.map((panel) => (
        <BenchmarkPanel key={panel.id} panel={panel} queries={queries} />
      ))}
    </>
  );
}
