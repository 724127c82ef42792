import {
  inlineNamedQuery,
  psqlVariableFlags,
  type NamedQuery,
  type QueryValues,
} from '@benchfleet/db';
import type { ShownQuery } from '../shared/shown-query.js';

/** A query as a panel's "Show SQL" gives it: runnable in psql as it stands, or with `-v` flags. */
export function shown<P extends string>(query: NamedQuery<P>, values: QueryValues<P>): ShownQuery {
  return {
    name: query.name,
    title: query.title,
    psql: inlineNamedQuery(query, values),
    variables: query.sql.trim(),
    flags: psqlVariableFlags(query, values),
  };
}
