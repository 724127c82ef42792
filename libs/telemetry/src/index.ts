export {
  noopTelemetry,
  processTelemetry,
  startTelemetry,
  type AttemptKey,
  type AttemptOutcome,
  type AttemptSpan,
  type AttemptStart,
  type EnqueueStart,
  type LlmCallEnd,
  type LlmCallSpan,
  type LlmCallStart,
  type SpanParent,
  type StartTelemetryOptions,
  type StepAttributes,
  type StepSpan,
  type Telemetry,
  type TelemetryShutdown,
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
