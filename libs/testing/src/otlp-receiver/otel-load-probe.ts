import { fileURLToPath } from 'node:url';

/**
 * `NODE_OPTIONS` for a child process whose OpenTelemetry use a test checks: it preloads
 * `otel-load-probe.mjs`, which tells at exit what the child loaded and registered.
 */
export const OTEL_LOAD_PROBE_NODE_OPTIONS = `--import=${fileURLToPath(
  new URL('./otel-load-probe.mjs', import.meta.url),
)}`;

export interface OtelLoadReport {
  /** How many `@opentelemetry/*` module files the process loaded. */
  readonly modules: number;
  /** Of those, how many are not `@opentelemetry/api` (a no-op facade others load too): the SDK, exporters. */
  readonly sdkModules: number;
  /** What it registered with the OpenTelemetry API: `trace` (a tracer provider), `context`, … */
  readonly registered: readonly string[];
}

/** The probe's report in a child's output; undefined when it wrote none (it did not exit). */
export function otelLoadReportOf(output: string): OtelLoadReport | undefined {
  const line = output
    .split('\n')
    .reverse()
    .find((candidate) => candidate.startsWith('otel-probe '));
  return line === undefined
    ? undefined
    : (JSON.parse(line.slice('otel-probe '.length)) as OtelLoadReport);
}
