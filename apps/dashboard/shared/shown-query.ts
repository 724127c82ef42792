/**
 * A query as the dashboard shows it under "Show SQL": the literals filled in for psql, and the
 * `:name`-variable text with the `psql -v` flags that run it. Shared by the server and the browser.
 */
export interface ShownQuery {
  name: string;
  title: string;
  psql: string;
  variables: string;
  flags: string;
}
