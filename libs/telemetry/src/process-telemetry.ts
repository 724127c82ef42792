// The process's telemetry: off (`noopTelemetry`) until `startTelemetry` installs the OpenTelemetry
// one. Apart from the interfaces (telemetry.ts), so that otel-tracing.ts, which implements them and
// is loaded from here only when tracing is on, imports nothing that imports it.
import type { TelemetryConfig } from './telemetry-config.js';
import type {
  AttemptSpan,
  AttemptStart,
  EnqueueStart,
  LlmCallSpan,
  SpanParent,
  StartTelemetryOptions,
  StepAttributes,
  StepSpan,
  Telemetry,
  TelemetryShutdown,
} from './telemetry.js';

const NOOP_PARENT = Object.freeze({}) as SpanParent;
const NOOP_ATTEMPT: AttemptSpan = Object.freeze({
  parent: NOOP_PARENT,
  setOutcome: () => undefined,
  recordStep: () => undefined,
});
const NOOP_STEP: StepSpan = Object.freeze({ set: () => undefined });
const NOOP_LLM_CALL: LlmCallSpan = Object.freeze({ end: () => undefined });
const COMPLETED: TelemetryShutdown = Object.freeze({ completed: true });

/** Tracing off: every method hands straight through, and no OpenTelemetry module is ever loaded. */
const noopTelemetry: Telemetry = Object.freeze({
  enabled: false,
  attemptSpan: <T>(_attempt: AttemptStart, run: (span: AttemptSpan) => Promise<T>) =>
    run(NOOP_ATTEMPT),
  stepSpan: <T>(
    _parent: SpanParent | undefined,
    _step: StepAttributes,
    run: (span: StepSpan) => Promise<T>,
  ) => run(NOOP_STEP),
  recordStep: () => undefined,
  within: <T>(_parent: SpanParent | undefined, run: () => T) => run(),
  attemptParentOf: () => undefined,
  enqueueSpan: <T>(_enqueue: EnqueueStart, run: () => Promise<T>) => run(),
  traceparent: () => undefined,
  startLlmCall: () => NOOP_LLM_CALL,
  flush: () => Promise.resolve(),
  shutdown: () => Promise.resolve(COMPLETED),
});

let installed: Telemetry = noopTelemetry;

/**
 * The process's telemetry: what `startTelemetry` installed, else `noopTelemetry`. Read at each use
 * (not kept), so a library made before tracing started still traces.
 */
export function processTelemetry(): Telemetry {
  return installed;
}

/**
 * Starts tracing as `config` says and installs it as the process's telemetry. Off, it returns
 * `noopTelemetry` and loads nothing; on, the OpenTelemetry SDK is imported now, and only now.
 */
export async function startTelemetry(
  config: TelemetryConfig,
  options: StartTelemetryOptions,
): Promise<Telemetry> {
  if (!config.enabled) return noopTelemetry;
  if (installed !== noopTelemetry)
    throw new Error('telemetry is already started in this process: shut it down first');
  const { startOtelTracing } = await import('./otel-tracing.js');
  const telemetry: Telemetry = await startOtelTracing(config, options, () => {
    if (installed === telemetry) installed = noopTelemetry;
  });
  installed = telemetry;
  return telemetry;
}
