export {
  startOtlpReceiver,
  type OtlpEncoding,
  type OtlpExportRequest,
  type OtlpReceiver,
  type OtlpReceiverOptions,
  type OtlpValue,
  type ReceivedSpan,
} from './otlp-receiver.js';
export {
  OTEL_LOAD_PROBE_NODE_OPTIONS,
  otelLoadReportOf,
  type OtelLoadReport,
} from './otel-load-probe.js';
