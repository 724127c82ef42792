import { useEffect, useState } from 'react';
import { apiGet, onDatabaseStatus, queryClient, setDatabaseDown } from './api';
import { Link, match, useLocation } from './router';
import { ComparePage, CompareTaskPage } from './compare-page';
import { RunsPage } from './runs-page';
import { RunPage } from './run-page';
import { TrajectoryPage } from './trajectory-page';
import { NotFoundPage } from './not-found-page';


function DatabaseBanner() {
  const [down, setDown] = useState(false);
  useEffect(() => onDatabaseStatus(setDown), []);
  useEffect(() => {
    if (!down) return;
    // While the database is away, ask the server every 2 s; when it answers, refresh everything.
    const timer = setInterval(async () => {
      const health = await apiGet<{ database: string }>('/api/health').catch(() => undefined);
      if (health?.database === 'up') {
        setDatabaseDown(false);
        await queryClient.invalidateQueries();
      }
    }, 2_000);
    return () => clearInterval(timer);
  }, [down]);
  if (!down) return null;
  return (
    <div className="banner banner-error" role="alert" data-banner="database-down">
      Postgres is not answering. What you see may be out of date; this page checks every 2 s and refreshes by itself when the database is back.
    </div>
  );
}

function Routes() {
  const { path, query } = useLocation();
  let params: Record<string, string> | undefined;
  if (path === '/') return <RunsPage />;
  if ((params = match('/runs/:run', path))) return <RunPage runId={params['run'] ?? ''} />;
  if ((params = match('/runs/:run/tasks/:task', path))) return <TrajectoryPage runId={params['run'] ?? ''} taskId={params['task'] ?? ''} />;
  if (path === '/compare') return <ComparePage a={query.get('a') ?? ''} b={query.get('b') ?? ''} />;
  if ((params = match('/compare/tasks/:task', path))) return <CompareTaskPage a={query.get('a') ?? ''} b={query.get('b') ?? ''} taskId={params['task'] ?? ''} />;
  return <NotFoundPage what={`There is no page at ${path}.`} />;
}

export function App() {
  return (
    <>
      <nav className="top-nav">
        <Link href="/" className="brand">
          benchfleet
        </Link>
        <Link href="/">Runs</Link>
        <Link href="/compare">Compare</Link>
        <a href="/queues">Queues</a>
      </nav>
      <DatabaseBanner />
      <main>
        <Routes />
      </main>
    </>
  );
}
