export { processTelemetry, startTelemetry } from './process-telemetry.js';
export type {
  AttemptOutcome,
  AttemptSpan,
  LlmCallEnd,
  LlmCallSpan,
  LlmCallStart,
  SpanParent,
  StepAttributes,
  Telemetry,
} from './telemetry.js';
export { telemetryConfigFromEnv, type TelemetryConfig } from './telemetry-config.js';
export { errorTypeOf } from './error-type.js';
