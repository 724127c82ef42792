export { noopTelemetry, processTelemetry, startTelemetry } from './process-telemetry.js';
export type {
  AttemptKey,
  AttemptOutcome,
  AttemptSpan,
  AttemptStart,
  EnqueueStart,
  LlmCallEnd,
  LlmCallSpan,
  LlmCallStart,
  SpanParent,
  StartTelemetryOptions,
  StepAttributes,
  StepSpan,
  Telemetry,
  TelemetryShutdown,
} from './telemetry.js';
export {
  telemetryConfigFromEnv,
  type BatchSettings,
  type OtlpProtocol,
  type TelemetryConfig,
  type TelemetryOff,
  type TelemetryOn,
} from './telemetry-config.js';
export { errorTypeOf } from './error-type.js';
export {
  BENCHFLEET,
  BENCHFLEET_SPANS,
  ERROR_TYPE_OTHER,
  GENAI,
  GENAI_PROVIDERS,
  GENERAL,
} from './span-attributes.js';
