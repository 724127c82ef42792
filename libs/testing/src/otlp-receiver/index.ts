export { startOtlpReceiver, type OtlpReceiver, type ReceivedSpan } from './otlp-receiver.js';
export { OTEL_LOAD_PROBE_NODE_OPTIONS, otelLoadReportOf } from './otel-load-probe.js';
