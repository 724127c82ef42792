// HEALTHCHECK of the benchfleet image: GET /healthz on BENCHFLEET_METRICS_PORT must answer 200.
// A container without a metrics port (scheduler migrate, scheduler worker) has nothing to check.
const port = process.env.BENCHFLEET_METRICS_PORT;
if (!port) process.exit(0);
try {
  const response = await fetch(`http://127.0.0.1:${port}/healthz`, {
    signal: AbortSignal.timeout(4_000),
  });
  process.exit(response.status === 200 ? 0 : 1);
} catch {
  process.exit(1);
}
