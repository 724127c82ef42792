import { Link, useTitle } from './router';

export function NotFoundPage({ what }: { what: string }) {
  useTitle('Not found');
  return (
    <div className="not-found" data-page="not-found">
      <h1>Not found</h1>
      <p>{what}</p>
      <p>
        <Link href="/">Back to all runs</Link>
      </p>
    </div>
  );
}
