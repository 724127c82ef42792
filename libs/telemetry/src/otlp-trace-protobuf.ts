// OTLP/protobuf of a batch of spans (an `ExportTraceServiceRequest`, opentelemetry-proto v1),
// written in one pass into one growing buffer. The SDK's serializer walks every string twice,
// char by char (a size estimate, then the copy); a fleet's spans repeat the same attribute keys
// in every span, so each key is encoded once and copied, and other strings are written natively.
import type { AttributeValue, Attributes, HrTime } from '@opentelemetry/api';
import type { ReadableSpan } from '@opentelemetry/sdk-trace';

const VARINT = 0;
const FIXED64 = 1;
const LENGTH_DELIMITED = 2;
const FIXED32 = 5;

/** Span flags: the parent's remoteness is known (bit 8), and it is remote (bit 9). */
const HAS_IS_REMOTE = 0x100;
const IS_REMOTE = 0x200;
const INITIAL_BYTES = 64 << 10;
/** Encoded attribute keys kept: a fleet uses a few dozen; an unbounded set would be a leak. */
const MAX_CACHED_KEYS = 1024;
const TWO_POW_32 = 2 ** 32;
const INT64_MIN = -(2 ** 63);
const INT64_LIMIT = 2 ** 63;

class ProtobufBuffer {
  bytes = Buffer.allocUnsafe(INITIAL_BYTES);
  pos = 0;

  ensure(extra: number): void {
    if (this.pos + extra <= this.bytes.length) return;
    const grown = Buffer.allocUnsafe(Math.max(this.bytes.length * 2, this.pos + extra));
    this.bytes.copy(grown, 0, 0, this.pos);
    this.bytes = grown;
  }

  /** A non-negative integer below 2^53. */
  varint(value: number): void {
    this.ensure(10);
    let rest = value;
    while (rest >= 0x80) {
      this.bytes[this.pos++] = (rest % 0x80) | 0x80;
      rest = Math.floor(rest / 0x80);
    }
    this.bytes[this.pos++] = rest;
  }

  /** Any int64, two's complement (a negative one takes ten bytes). */
  int64(value: number): void {
    if (value >= 0 && value <= Number.MAX_SAFE_INTEGER) return this.varint(value);
    let rest = BigInt.asUintN(64, BigInt(value));
    this.ensure(10);
    while (rest >= 0x80n) {
      this.bytes[this.pos++] = Number(rest & 0x7fn) | 0x80;
      rest >>= 7n;
    }
    this.bytes[this.pos++] = Number(rest);
  }

  tag(field: number, wireType: number): void {
    this.varint((field << 3) | wireType);
  }

  fixed32(value: number): void {
    this.ensure(4);
    this.bytes.writeUInt32LE(value >>> 0, this.pos);
    this.pos += 4;
  }

  /** Nanoseconds since the epoch of an HrTime, exact (whole seconds and nanoseconds kept apart). */
  hrTime(time: HrTime): void {
    const [seconds, nanos] = time;
    // seconds × 1e9 + nanos as two 32-bit halves: seconds split so no product passes 2^53.
    const high16 = Math.floor(seconds / 0x10000);
    const low16 = seconds % 0x10000;
    const lowPart = low16 * 1e9 + nanos;
    const highPart = high16 * 1e9;
    const low = (lowPart % TWO_POW_32) + (highPart % 0x10000) * 0x10000;
    this.ensure(8);
    this.bytes.writeUInt32LE(low % TWO_POW_32, this.pos);
    this.bytes.writeUInt32LE(
      (Math.floor(lowPart / TWO_POW_32) +
        Math.floor(highPart / 0x10000) +
        Math.floor(low / TWO_POW_32)) >>>
        0,
      this.pos + 4,
    );
    this.pos += 8;
  }

  double(value: number): void {
    this.ensure(8);
    this.bytes.writeDoubleLE(value, this.pos);
    this.pos += 8;
  }

  string(field: number, text: string): void {
    this.tag(field, LENGTH_DELIMITED);
    // UTF-8 takes at most 3 bytes per UTF-16 unit: a short string's length fits one byte.
    if (text.length <= 42) {
      this.ensure(1 + text.length * 3);
      const written = this.bytes.write(text, this.pos + 1, 'utf8');
      this.bytes[this.pos] = written;
      this.pos += 1 + written;
      return;
    }
    const length = Buffer.byteLength(text, 'utf8');
    this.varint(length);
    this.ensure(length);
    this.pos += this.bytes.write(text, this.pos, 'utf8');
  }

  /** A trace or span id, given in hex, as its bytes. */
  hexId(field: number, hex: string): void {
    this.tag(field, LENGTH_DELIMITED);
    const length = hex.length >>> 1;
    this.varint(length);
    this.ensure(length);
    // Ids come valid from the SDK; were one not hex, its bytes are zeros rather than a torn message.
    const written = this.bytes.write(hex, this.pos, length, 'hex');
    if (written < length) this.bytes.fill(0, this.pos + written, this.pos + length);
    this.pos += length;
  }

  raw(bytes: Uint8Array): void {
    this.ensure(bytes.length);
    this.bytes.set(bytes, this.pos);
    this.pos += bytes.length;
  }

  /** Starts a length-delimited field; `end` writes its length in front of it. */
  begin(field: number): number {
    this.tag(field, LENGTH_DELIMITED);
    this.ensure(1);
    return this.pos++;
  }

  end(start: number): void {
    const length = this.pos - start - 1;
    if (length < 0x80) {
      this.bytes[start] = length;
      return;
    }
    let size = 1;
    for (let rest = length; rest >= 0x80; rest = Math.floor(rest / 0x80)) size += 1;
    this.ensure(size - 1);
    this.bytes.copyWithin(start + size, start + 1, this.pos);
    const after = this.pos + size - 1;
    this.pos = start;
    this.varint(length);
    this.pos = after;
  }
}

/** Each attribute key as its encoded `KeyValue.key` field (tag, length, UTF-8). */
const encodedKeys = new Map<string, Buffer>();

function encodedKey(key: string): Buffer {
  let encoded = encodedKeys.get(key);
  if (encoded === undefined) {
    const scratch = new ProtobufBuffer();
    scratch.string(1, key);
    encoded = Buffer.from(scratch.bytes.subarray(0, scratch.pos));
    if (encodedKeys.size >= MAX_CACHED_KEYS) encodedKeys.clear();
    encodedKeys.set(key, encoded);
  }
  return encoded;
}

/** An `AnyValue` (the field is already open): as the SDK's serializer maps attribute values. */
function anyValue(out: ProtobufBuffer, value: AttributeValue | null | undefined): void {
  if (typeof value === 'string') out.string(1, value);
  else if (typeof value === 'boolean') {
    out.tag(2, VARINT);
    out.varint(value ? 1 : 0);
  } else if (typeof value === 'number') {
    if (Number.isInteger(value) && value >= INT64_MIN && value < INT64_LIMIT) {
      out.tag(3, VARINT);
      out.int64(value);
    } else {
      out.tag(4, FIXED64);
      out.double(value);
    }
  } else if (Array.isArray(value)) {
    const array = out.begin(5);
    for (const item of value as readonly (string | number | boolean | null | undefined)[]) {
      const entry = out.begin(1);
      anyValue(out, item);
      out.end(entry);
    }
    out.end(array);
  }
}

function attributes(out: ProtobufBuffer, field: number, values: Attributes | undefined): void {
  if (values === undefined) return;
  for (const key in values) {
    if (!Object.prototype.hasOwnProperty.call(values, key)) continue;
    const keyValue = out.begin(field);
    out.raw(encodedKey(key));
    const value = out.begin(2);
    anyValue(out, values[key]);
    out.end(value);
    out.end(keyValue);
  }
}

function flagsOf(traceFlags: number, isRemote: boolean | undefined): number {
  return (traceFlags & 0xff) | HAS_IS_REMOTE | (isRemote === true ? IS_REMOTE : 0);
}

function span(out: ProtobufBuffer, item: ReadableSpan): void {
  const context = item.spanContext();
  out.hexId(1, context.traceId);
  out.hexId(2, context.spanId);
  const traceState = context.traceState?.serialize();
  if (traceState) out.string(3, traceState);
  const parent = item.parentSpanContext;
  if (parent?.spanId) out.hexId(4, parent.spanId);
  out.string(5, item.name);
  // The API's kinds start at INTERNAL = 0; OTLP's at UNSPECIFIED = 0.
  out.tag(6, VARINT);
  out.varint(item.kind + 1);
  out.tag(7, FIXED64);
  out.hrTime(item.startTime);
  out.tag(8, FIXED64);
  out.hrTime(item.endTime);
  attributes(out, 9, item.attributes);
  out.tag(10, VARINT);
  out.varint(item.droppedAttributesCount);
  for (const event of item.events) {
    const start = out.begin(11);
    out.tag(1, FIXED64);
    out.hrTime(event.time);
    out.string(2, event.name);
    attributes(out, 3, event.attributes);
    out.tag(4, VARINT);
    out.varint(event.droppedAttributesCount ?? 0);
    out.end(start);
  }
  out.tag(12, VARINT);
  out.varint(item.droppedEventsCount);
  for (const link of item.links) {
    const start = out.begin(13);
    out.hexId(1, link.context.traceId);
    out.hexId(2, link.context.spanId);
    const linkState = link.context.traceState?.serialize();
    if (linkState) out.string(3, linkState);
    attributes(out, 4, link.attributes);
    out.tag(5, VARINT);
    out.varint(link.droppedAttributesCount ?? 0);
    out.tag(6, FIXED32);
    out.fixed32(flagsOf(link.context.traceFlags, link.context.isRemote));
    out.end(start);
  }
  out.tag(14, VARINT);
  out.varint(item.droppedLinksCount);
  const status = out.begin(15);
  if (item.status.message) out.string(2, item.status.message);
  out.tag(3, VARINT);
  out.varint(item.status.code);
  out.end(status);
  out.tag(16, FIXED32);
  out.fixed32(flagsOf(context.traceFlags, parent?.isRemote));
}

/** The spans grouped by resource, then by instrumentation scope, in the order they came. */
function grouped(spans: readonly ReadableSpan[]): Map<unknown, Map<unknown, ReadableSpan[]>> {
  const byResource = new Map<unknown, Map<unknown, ReadableSpan[]>>();
  for (const item of spans) {
    let byScope = byResource.get(item.resource);
    if (byScope === undefined) byResource.set(item.resource, (byScope = new Map()));
    let list = byScope.get(item.instrumentationScope);
    if (list === undefined) byScope.set(item.instrumentationScope, (list = []));
    list.push(item);
  }
  return byResource;
}

/** The body of an OTLP/HTTP protobuf trace export of `spans`. */
export function encodeTraceExportRequest(spans: readonly ReadableSpan[]): Uint8Array {
  const out = new ProtobufBuffer();
  for (const byScope of grouped(spans).values()) {
    const resourceSpans = out.begin(1);
    const first = byScope.values().next().value?.[0];
    if (first !== undefined) {
      const resource = out.begin(1);
      attributes(out, 1, first.resource.attributes);
      out.tag(2, VARINT);
      out.varint(0);
      out.end(resource);
    }
    for (const list of byScope.values()) {
      const scopeSpans = out.begin(2);
      const scope = list[0]!.instrumentationScope;
      const scopeField = out.begin(1);
      out.string(1, scope.name);
      if (scope.version) out.string(2, scope.version);
      out.end(scopeField);
      for (const item of list) {
        const start = out.begin(2);
        span(out, item);
        out.end(start);
      }
      if (scope.schemaUrl) out.string(3, scope.schemaUrl);
      out.end(scopeSpans);
    }
    if (first?.resource.schemaUrl) out.string(3, first.resource.schemaUrl);
    out.end(resourceSpans);
  }
  return out.bytes.subarray(0, out.pos);
}
