import protobuf from 'protobufjs';

/**
 * The messages of an OTLP/HTTP trace export, written from the OpenTelemetry protocol's
 * definitions (opentelemetry-proto v1: common, resource, trace and the trace collector service),
 * reduced to what a receiver reads. Field numbers are the protocol's; protobufjs turns the
 * snake_case names into the camelCase that OTLP/JSON uses, so both encodings decode to one shape.
 * Enums are read as int32 and nested messages are declared at top level: the bytes are the same.
 */
const OTLP_TRACE_PROTO = `
syntax = "proto3";
package opentelemetry.proto;

message AnyValue {
  oneof value {
    string string_value = 1;
    bool bool_value = 2;
    int64 int_value = 3;
    double double_value = 4;
    ArrayValue array_value = 5;
    KeyValueList kvlist_value = 6;
    bytes bytes_value = 7;
  }
}
message ArrayValue { repeated AnyValue values = 1; }
message KeyValueList { repeated KeyValue values = 1; }
message KeyValue { string key = 1; AnyValue value = 2; }
message InstrumentationScope {
  string name = 1;
  string version = 2;
  repeated KeyValue attributes = 3;
  uint32 dropped_attributes_count = 4;
}
message Resource { repeated KeyValue attributes = 1; uint32 dropped_attributes_count = 2; }

message Status { string message = 2; int32 code = 3; }
message SpanEvent {
  fixed64 time_unix_nano = 1;
  string name = 2;
  repeated KeyValue attributes = 3;
  uint32 dropped_attributes_count = 4;
}
message SpanLink {
  bytes trace_id = 1;
  bytes span_id = 2;
  string trace_state = 3;
  repeated KeyValue attributes = 4;
  uint32 dropped_attributes_count = 5;
  fixed32 flags = 6;
}
message Span {
  bytes trace_id = 1;
  bytes span_id = 2;
  string trace_state = 3;
  bytes parent_span_id = 4;
  string name = 5;
  int32 kind = 6;
  fixed64 start_time_unix_nano = 7;
  fixed64 end_time_unix_nano = 8;
  repeated KeyValue attributes = 9;
  uint32 dropped_attributes_count = 10;
  repeated SpanEvent events = 11;
  uint32 dropped_events_count = 12;
  repeated SpanLink links = 13;
  uint32 dropped_links_count = 14;
  Status status = 15;
  fixed32 flags = 16;
}
message ScopeSpans { InstrumentationScope scope = 1; repeated Span spans = 2; string schema_url = 3; }
message ResourceSpans { Resource resource = 1; repeated ScopeSpans scope_spans = 2; string schema_url = 3; }
message ExportTraceServiceRequest { repeated ResourceSpans resource_spans = 1; }
message ExportTracePartialSuccess { int64 rejected_spans = 1; string error_message = 2; }
message ExportTraceServiceResponse { ExportTracePartialSuccess partial_success = 1; }
`;

const root = protobuf.parse(OTLP_TRACE_PROTO).root;
const exportTraceServiceRequest = root.lookupType('opentelemetry.proto.ExportTraceServiceRequest');
const exportTraceServiceResponse = root.lookupType(
  'opentelemetry.proto.ExportTraceServiceResponse',
);

/** A decoded request as plain data: int64 as strings, bytes as base64, enums as numbers. */
export function decodeTraceRequest(body: Uint8Array): unknown {
  return exportTraceServiceRequest.toObject(exportTraceServiceRequest.decode(body), {
    longs: String,
    bytes: String,
    enums: Number,
    oneofs: false,
  });
}

/** What a collector answers when it took every span: an `ExportTraceServiceResponse` with no partial success. */
export function emptyTraceResponse(): Uint8Array {
  return exportTraceServiceResponse.encode(exportTraceServiceResponse.create({})).finish();
}
