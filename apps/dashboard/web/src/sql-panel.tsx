import { useState, type ReactNode } from 'react';
import type { ShownQuery } from './api';

/** A panel with a "Show SQL" toggle that reveals the queries that produced it, runnable in psql. */
export function Panel({
  title,
  queries,
  children,
  id,
  actions,
}: {
  title: ReactNode;
  queries: ShownQuery[] | undefined;
  children: ReactNode;
  id: string;
  actions?: ReactNode;
}) {
  const [open, setOpen] = useState(false);
  return (
    <section className="panel" data-panel={id} aria-labelledby={`${id}-title`}>
      <header className="panel-header">
        <h2 id={`${id}-title`}>{title}</h2>
        <div className="panel-actions">
          {actions}
          {queries && queries.length > 0 && (
            <button
              type="button"
              className="sql-toggle"
              aria-expanded={open}
              onClick={() => setOpen(!open)}
            >
              {open ? 'Hide SQL' : 'Show SQL'}
            </button>
          )}
        </div>
      </header>
      {open && queries && <ShownSql queries={queries} />}
      {children}
    </section>
  );
}

function ShownSql({ queries }: { queries: ShownQuery[] }) {
  return (
    <div className="sql-shown">
      {queries.map((query) => (
        <div key={query.name} className="sql-query" data-query={query.name}>
          <p className="muted">
            <strong>{query.name}</strong>: {query.title}. Run as shown with{' '}
            <code>psql "$DATABASE_URL"</code>, or save the second form as{' '}
            <code>{query.name}.sql</code> and run{' '}
            <code>
              psql "$DATABASE_URL" {query.flags} -f {query.name}.sql
            </code>
            .
          </p>
          <pre className="sql" data-sql="psql">
            {query.psql};
          </pre>
          <details>
            <summary>with psql variables</summary>
            <pre className="sql" data-sql="variables">
              {query.variables};
            </pre>
          </details>
        </div>
      ))}
    </div>
  );
}
