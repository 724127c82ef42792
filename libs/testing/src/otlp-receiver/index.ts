export {
  startOtlpReceiver,
  type OtlpEncoding,
  type OtlpExportRequest,
  type OtlpReceiver,
  type OtlpReceiverOptions,
  type OtlpValue,
  type ReceivedSpan,
} from './otlp-receiver.js';
