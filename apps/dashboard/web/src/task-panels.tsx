import { createContext, useContext, useState } from 'react';
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

/** Where a panel's artifact link goes (the task's artifact route); none: the label alone. */
const ArtifactHref = createContext<((uri: string) => string) | undefined>(undefined);

function Text({ parts }: { parts: readonly TaskPanelText[] }) {
  const artifactHref = useContext(ArtifactHref);
  return (
    <>
      {parts.map((part, i) =>
        typeof part === 'string' ? (
          <span key={i}>{part}</span>
        ) : 'artifact' in part ? (
          artifactHref ? (
            <a
              key={i}
              href={artifactHref(part.artifact)}
              data-artifact={part.label}
              target="_blank"
              rel="noreferrer"
            >
              {part.label}
            </a>
          ) : (
            <code key={i}>{part.label}</code>
          )
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

function Cell({ cell }: { cell: TaskPanelCell | undefined }) {
  if (cell === undefined) return null;
  if (cell !== null && typeof cell === 'object') return <Text parts={cell.text} />;
  return <>{typeof cell === 'string' ? cell : decimal(cell)}</>;
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
                <Cell cell={row.cells[column.key]} />
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

/** A benchmark's panels; `artifactHref` turns the files they link into the URL that serves them. */
export function TaskPanels({
  panels,
  queries,
  artifactHref,
}: {
  panels: readonly TaskPanel[];
  queries: ShownQuery[];
  artifactHref?: (uri: string) => string;
}) {
  return (
    <ArtifactHref.Provider value={artifactHref}>
      {panels.map((panel) => (
        <BenchmarkPanel key={panel.id} panel={panel} queries={queries} />
      ))}
    </ArtifactHref.Provider>
  );
}
