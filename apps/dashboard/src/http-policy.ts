import type { ErrorHandler, MiddlewareHandler } from 'hono';
import { compress } from 'hono/compress';
import type { Logger } from '@benchfleet/core';

// What every answer of the dashboard shares: its headers, its compression and its errors.

/** A run, task or page that does not exist: HTTP 404 with the message. */
export class NotFound extends Error {}

// A SQLSTATE outside the connection classes is a query fault; anything else (refused, reset,
// timed out, shutting down) means the database is not there.
function isDatabaseDown(error: unknown): boolean {
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code))
    return code.startsWith('08') || code.startsWith('57P') || code === '53300';
  return true;
}

/** 404 for NotFound, 503 while Postgres is away (the pages retry by themselves), 500 logged otherwise. */
export function errorResponse(logger: Logger): ErrorHandler {
  return (error, c) => {
    if (error instanceof NotFound) return c.json({ error: error.message }, 404);
    if (isDatabaseDown(error))
      return c.json(
        { error: 'database unavailable: Postgres does not answer; this page retries by itself' },
        503,
      );
    logger.error({ err: error, path: c.req.path }, 'request failed');
    return c.json({ error: 'internal error; the server log has the details' }, 500);
  };
}

const SECURITY_HEADERS: Record<string, string> = {
  'Content-Security-Policy':
    "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data: blob:; connect-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'; form-action 'self'",
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'no-referrer',
  'X-Frame-Options': 'DENY',
};

/** The dashboard's headers on every answer, except where a page set its own (the queue view's CSP). */
export const securityHeaders: MiddlewareHandler = async (c, next) => {
  await next();
  for (const [name, value] of Object.entries(SECURITY_HEADERS))
    if (!c.res.headers.has(name)) c.header(name, value);
};

/** JSON compressed, but not the event stream (it must flush as it goes), images, the task list (gzipped once, kept), or export zips. */
export function compressApi(): MiddlewareHandler {
  const compressJson = compress();
  return (c, next) =>
    /\/(events|screenshot|tasks)$|\/exports\//.test(c.req.path) ? next() : compressJson(c, next);
}
