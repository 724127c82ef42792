// The OTLP/HTTP protobuf span exporter: the SDK's transport (retries, Retry-After, gzip, headers,
// deadline) with this package's encoder in place of the SDK's serializer (see otlp-trace-protobuf.ts).
import { OTLPExporterBase } from '@opentelemetry/otlp-exporter-base';
import {
  convertLegacyHttpOptions,
  createOtlpHttpExportDelegate,
} from '@opentelemetry/otlp-exporter-base/node-http';
import {
  ProtobufTraceSerializer,
  TraceExporterMetricsHelper,
} from '@opentelemetry/otlp-transformer';
import type { ReadableSpan, SpanExporter } from '@opentelemetry/sdk-trace';
import { encodeTraceExportRequest } from './otlp-trace-protobuf.js';

type LegacyOptions = Parameters<typeof convertLegacyHttpOptions>[0];

export interface ProtobufExporterOptions {
  readonly url: string;
  readonly headers: Record<string, string>;
  readonly timeoutMillis: number;
  readonly compression: 'gzip' | 'none';
}

export function protobufTraceExporter(options: ProtobufExporterOptions): SpanExporter {
  const delegate = createOtlpHttpExportDelegate(
    convertLegacyHttpOptions(
      {
        url: options.url,
        headers: options.headers,
        timeoutMillis: options.timeoutMillis,
        compression: options.compression as LegacyOptions['compression'],
      },
      'TRACES',
      'v1/traces',
      { 'Content-Type': 'application/x-protobuf' },
    ),
    {
      serializeRequest: (spans: ReadableSpan[]) => encodeTraceExportRequest(spans),
      deserializeResponse: (body: Uint8Array) => ProtobufTraceSerializer.deserializeResponse(body),
    },
    'otlp_http_span_exporter',
    TraceExporterMetricsHelper,
    undefined,
  );
  return new OTLPExporterBase<ReadableSpan[]>(delegate);
}
