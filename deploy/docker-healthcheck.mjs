// HEALTHCHECK of the benchfleet image. A worker: GET /healthz on BENCHFLEET_METRICS_PORT must answer
// 200. The dashboard (DASHBOARD_PORT set): GET /api/health, with its token, must answer 200 and say
// Postgres and Redis are up. A container with neither (scheduler migrate, a CLI) has nothing to check.
import { readFileSync } from 'node:fs';

const env = process.env;

async function ok(path, port, headers = {}) {
  const response = await fetch(`http://127.0.0.1:${port}${path}`, {
    headers,
    signal: AbortSignal.timeout(8_000),
  });
  if (response.status !== 200) return false;
  if (path !== '/api/health') return true;
  const health = await response.json();
  return health.database === 'up' && health.redis === 'up';
}

// The entrypoint reads DASHBOARD_TOKEN_FILE for the server only: a check is a process of its own.
function dashboardToken() {
  if (env.DASHBOARD_TOKEN) return env.DASHBOARD_TOKEN;
  return env.DASHBOARD_TOKEN_FILE ? readFileSync(env.DASHBOARD_TOKEN_FILE, 'utf8').trim() : '';
}

try {
  if (env.BENCHFLEET_METRICS_PORT) {
    process.exit((await ok('/healthz', env.BENCHFLEET_METRICS_PORT)) ? 0 : 1);
  } else if (env.DASHBOARD_PORT) {
    const token = dashboardToken();
    const headers = token ? { authorization: `Bearer ${token}` } : {};
    process.exit((await ok('/api/health', env.DASHBOARD_PORT, headers)) ? 0 : 1);
  }
  process.exit(0);
} catch {
  process.exit(1);
}
