import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gunzipSync } from 'node:zlib';

type OtlpValue =
  string | number | boolean | null | readonly OtlpValue[] | { readonly [key: string]: OtlpValue };

type OtlpEncoding = 'protobuf' | 'json';

/** One span as the receiver decoded it, with its resource and scope; ids in lowercase hex. */
export interface ReceivedSpan {
  readonly traceId: string;
  readonly spanId: string;
  /** Absent on a root span. */
  readonly parentSpanId?: string;
  readonly name: string;
  /** OTLP's SpanKind: 1 internal, 2 server, 3 client, 4 producer, 5 consumer. */
  readonly kind: number;
  readonly startTimeUnixNano: bigint;
  readonly endTimeUnixNano: bigint;
  readonly attributes: Readonly<Record<string, OtlpValue>>;
  /** OTLP's StatusCode: 0 unset, 1 ok, 2 error. */
  readonly status: { readonly code: number; readonly message?: string };
  readonly events: readonly {
    readonly name: string;
    readonly attributes: Readonly<Record<string, OtlpValue>>;
  }[];
  /** Spans this one is linked to (not its parent): e.g. the enqueue span of an attempt's job. */
  readonly links: readonly { readonly traceId: string; readonly spanId: string }[];
  readonly resource: Readonly<Record<string, OtlpValue>>;
  readonly scope: { readonly name: string; readonly version?: string };
  readonly encoding: OtlpEncoding;
}

/** One export request as it arrived. */
interface OtlpExportRequest {
  readonly encoding: OtlpEncoding | 'unsupported';
  readonly contentType: string;
  /** Request headers, lowercase names: what a test checks `OTEL_EXPORTER_OTLP_HEADERS` against. */
  readonly headers: IncomingHttpHeaders;
  /** Spans it held (0 when it could not be read). */
  readonly spans: number;
  /** The HTTP status it was answered with; 0 while held. */
  status: number;
}

export interface OtlpReceiverOptions {
  readonly host?: string;
  /** 0 (default) picks a free port. */
  readonly port?: number;
}

export interface OtlpReceiver {
  /** `http://host:port`: what `OTEL_EXPORTER_OTLP_ENDPOINT` takes (the exporter appends `/v1/traces`). */
  readonly url: string;
  readonly tracesUrl: string;
  /** Every export request, in arrival order, held and refused ones included. */
  readonly requests: readonly OtlpExportRequest[];
  /** Every span received so far, in arrival order. */
  spans(): readonly ReceivedSpan[];
  /** From now on export requests wait, unanswered, until `release()` (a collector that does not answer). */
  hold(): void;
  release(): void;
  /** Export requests waiting for `release()`. */
  held(): number;
  /** Resolves once `condition` holds, checked now and after every request the receiver sees. */
  until(condition: () => boolean): Promise<void>;
  close(): Promise<void>;
}

const MAX_BODY_BYTES = 16 * 2 ** 20;

interface RawKeyValue {
  key?: string;
  value?: RawAnyValue;
}
interface RawAnyValue {
  stringValue?: string;
  boolValue?: boolean;
  intValue?: string | number;
  doubleValue?: number;
  bytesValue?: string;
  arrayValue?: { values?: RawAnyValue[] };
  kvlistValue?: { values?: RawKeyValue[] };
}
interface RawSpan {
  traceId?: string;
  spanId?: string;
  parentSpanId?: string;
  name?: string;
  kind?: number;
  startTimeUnixNano?: string | number;
  endTimeUnixNano?: string | number;
  attributes?: RawKeyValue[];
  events?: { name?: string; attributes?: RawKeyValue[] }[];
  links?: { traceId?: string; spanId?: string }[];
  status?: { code?: number; message?: string };
}
interface RawRequest {
  resourceSpans?: {
    resource?: { attributes?: RawKeyValue[] };
    scopeSpans?: { scope?: { name?: string; version?: string }; spans?: RawSpan[] }[];
  }[];
}

function valueOf(raw: RawAnyValue | undefined): OtlpValue {
  if (raw === undefined) return null;
  if (raw.stringValue !== undefined) return raw.stringValue;
  if (raw.boolValue !== undefined) return raw.boolValue;
  if (raw.intValue !== undefined) return Number(raw.intValue);
  if (raw.doubleValue !== undefined) return Number(raw.doubleValue);
  if (raw.bytesValue !== undefined) return raw.bytesValue;
  if (raw.arrayValue !== undefined) return (raw.arrayValue.values ?? []).map(valueOf);
  if (raw.kvlistValue !== undefined) return attributesOf(raw.kvlistValue.values);
  return null;
}

function attributesOf(raw: RawKeyValue[] | undefined): Record<string, OtlpValue> {
  const out: Record<string, OtlpValue> = {};
  for (const { key, value } of raw ?? []) if (key !== undefined) out[key] = valueOf(value);
  return out;
}

/** OTLP/JSON carries ids in hex, protobuf as bytes (base64 once decoded): both end as hex. */
function idOf(raw: string | undefined, encoding: OtlpEncoding): string | undefined {
  if (raw === undefined || raw === '') return undefined;
  return encoding === 'json'
    ? raw.toLowerCase()
    : Buffer.from(raw, 'base64').toString('hex') || undefined;
}

function spansOf(request: RawRequest, encoding: OtlpEncoding): ReceivedSpan[] {
  const out: ReceivedSpan[] = [];
  for (const resourceSpans of request.resourceSpans ?? []) {
    const resource = attributesOf(resourceSpans.resource?.attributes);
    for (const scopeSpans of resourceSpans.scopeSpans ?? []) {
      const scope = {
        name: scopeSpans.scope?.name ?? '',
        ...(scopeSpans.scope?.version && { version: scopeSpans.scope.version }),
      };
      for (const span of scopeSpans.spans ?? []) {
        const parentSpanId = idOf(span.parentSpanId, encoding);
        out.push({
          traceId: idOf(span.traceId, encoding) ?? '',
          spanId: idOf(span.spanId, encoding) ?? '',
          ...(parentSpanId !== undefined && { parentSpanId }),
          name: span.name ?? '',
          kind: span.kind ?? 0,
          startTimeUnixNano: BigInt(span.startTimeUnixNano ?? 0),
          endTimeUnixNano: BigInt(span.endTimeUnixNano ?? 0),
          attributes: attributesOf(span.attributes),
          status: {
            code: span.status?.code ?? 0,
            ...(span.status?.message && { message: span.status.message }),
          },
          events: (span.events ?? []).map((event) => ({
            name: event.name ?? '',
            attributes: attributesOf(event.attributes),
          })),
          links: (span.links ?? []).map((link) => ({
            traceId: idOf(link.traceId, encoding) ?? '',
            spanId: idOf(link.spanId, encoding) ?? '',
          })),
          resource,
          scope,
          encoding,
        });
      }
    }
  }
  return out;
}

/**
 * An OpenTelemetry collector for tests: accepts OTLP/HTTP trace exports (`POST /v1/traces`) in
 * protobuf (`application/x-protobuf`) and JSON (`application/json`), gzipped or not, answers them
 * as a collector does (an empty `ExportTraceServiceResponse`), and keeps every span for assertions.
 * `hold()` makes it a collector that takes requests and never answers.
 */
export async function startOtlpReceiver(options: OtlpReceiverOptions = {}): Promise<OtlpReceiver> {
  // protobufjs is loaded by the tests that start a receiver, not by every test of the kit.
  const { decodeTraceRequest, emptyTraceResponse } = await import('./otlp-trace-schema.js');
  const host = options.host ?? '127.0.0.1';
  const requests: OtlpExportRequest[] = [];
  const received: ReceivedSpan[] = [];
  const watchers = new Set<{ condition: () => boolean; resolve: () => void }>();
  let gate: { opened: Promise<void>; open(): void } | undefined;
  let heldNow = 0;
  let closed = false;
  const changed = (): void => {
    for (const watcher of watchers)
      if (watcher.condition()) {
        watchers.delete(watcher);
        watcher.resolve();
      }
  };

  const answer = (
    res: ServerResponse,
    request: OtlpExportRequest,
    status: number,
    contentType: string,
    body: Uint8Array | string,
  ): void => {
    request.status = status;
    changed();
    if (res.destroyed || res.headersSent) return;
    res.writeHead(status, { 'content-type': contentType });
    res.end(body);
  };

  const server = createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://receiver').pathname;
    if (req.method !== 'POST' || path !== '/v1/traces') {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not found');
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size <= MAX_BODY_BYTES) chunks.push(chunk);
    });
    req.on('end', () => {
      void (async () => {
        const contentType = (req.headers['content-type'] ?? '').split(';')[0]!.trim();
        const encoding: OtlpExportRequest['encoding'] =
          contentType === 'application/x-protobuf'
            ? 'protobuf'
            : contentType === 'application/json'
              ? 'json'
              : 'unsupported';
        let spans: ReceivedSpan[] = [];
        let problem: string | undefined;
        if (encoding === 'unsupported') problem = `unsupported content-type '${contentType}'`;
        else if (size > MAX_BODY_BYTES) problem = 'body too large';
        else
          try {
            let body = Buffer.concat(chunks);
            if (req.headers['content-encoding'] === 'gzip') body = gunzipSync(body);
            const raw =
              encoding === 'protobuf'
                ? decodeTraceRequest(body)
                : (JSON.parse(body.toString('utf8')) as unknown);
            spans = spansOf(raw as RawRequest, encoding);
          } catch (error) {
            problem = `unreadable ${encoding} body: ${error instanceof Error ? error.message : String(error)}`;
          }
        const request: OtlpExportRequest = {
          encoding,
          contentType,
          headers: req.headers,
          spans: spans.length,
          status: 0,
        };
        requests.push(request);
        received.push(...spans);
        changed();
        if (gate) {
          heldNow += 1;
          changed();
          await gate.opened;
          heldNow -= 1;
        }
        if (problem !== undefined) {
          answer(res, request, encoding === 'unsupported' ? 415 : 400, 'text/plain', problem);
          return;
        }
        if (encoding === 'protobuf')
          answer(res, request, 200, 'application/x-protobuf', emptyTraceResponse());
        else answer(res, request, 200, 'application/json', '{}');
      })();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  const url = `http://${host.includes(':') ? `[${host}]` : host}:${port}`;

  return {
    url,
    tracesUrl: `${url}/v1/traces`,
    requests,
    spans: () => received,
    hold: () => {
      if (gate) return;
      let open!: () => void;
      const opened = new Promise<void>((resolve) => (open = resolve));
      gate = { opened, open };
    },
    release: () => {
      gate?.open();
      gate = undefined;
    },
    held: () => heldNow,
    until: (condition) =>
      condition()
        ? Promise.resolve()
        : new Promise<void>((resolve) => watchers.add({ condition, resolve })),
    close: async () => {
      if (closed) return;
      closed = true;
      const done = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
      gate?.open();
      await done;
    },
  };
}
