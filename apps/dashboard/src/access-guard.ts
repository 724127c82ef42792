import { createHash, timingSafeEqual } from 'node:crypto';
import type { MiddlewareHandler } from 'hono';
import { getCookie, setCookie } from 'hono/cookie';
import { isLoopbackHost } from './dashboard-config.js';

const COOKIE = 'benchfleet_dashboard';

function sameSecret(given: string, expected: string): boolean {
  // Hashing first makes the comparison constant-time whatever the lengths.
  const a = createHash('sha256').update(given).digest();
  const b = createHash('sha256').update(expected).digest();
  return timingSafeEqual(a, b);
}

function hostName(hostHeader: string): string {
  const host = hostHeader.trim().toLowerCase();
  if (host.startsWith('[')) return host.slice(0, host.indexOf(']') + 1);
  return host.replace(/:\d+$/, '');
}

/**
 * With a token, every request needs it: `Authorization: Bearer …`, or the cookie set when a page
 * is opened once with `?token=…` (images and the event stream cannot send headers). Without a
 * token the server is bound to loopback, and requests must name a loopback host, so that a web
 * page elsewhere cannot reach it through DNS rebinding.
 */
export function accessGuard(authToken: string | undefined): MiddlewareHandler {
  return async (c, next) => {
    if (!authToken) {
      const host = hostName(c.req.header('host') ?? '');
      if (!isLoopbackHost(host))
        return c.text(
          `this dashboard answers only to localhost, not to host ${host || '(none)'}\n`,
          403,
        );
      return next();
    }
    const header = c.req.header('authorization') ?? '';
    const bearer = /^Bearer\s+(.+)$/i.exec(header)?.[1];
    if (bearer !== undefined && sameSecret(bearer, authToken)) return next();
    const cookie = getCookie(c, COOKIE);
    if (cookie !== undefined && sameSecret(cookie, authToken)) return next();
    const url = new URL(c.req.url);
    const query = url.searchParams.get('token');
    if (query !== null && sameSecret(query, authToken)) {
      setCookie(c, COOKIE, authToken, { httpOnly: true, sameSite: 'Strict', path: '/' });
      url.searchParams.delete('token');
      if (c.req.method === 'GET' && !url.pathname.startsWith('/api/'))
        return c.redirect(`${url.pathname}${url.search}`, 303);
      return next();
    }
    c.header('WWW-Authenticate', 'Bearer realm="benchfleet dashboard"');
    return c.text(
      'this dashboard needs its token: open it once as /?token=… (the --auth-token or DASHBOARD_TOKEN it was started with), or send Authorization: Bearer …\n',
      401,
    );
  };
}
