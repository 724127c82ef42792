import { afterEach, describe, expect, it } from 'vitest';
import { SpanKind, SpanStatusCode, context, trace } from '@opentelemetry/api';
import { OTLPTraceExporter as JsonExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import {
  InMemorySpanExporter,
  SimpleSpanProcessor,
  TracerProvider,
  type ReadableSpan,
  type SpanExporter,
} from '@opentelemetry/sdk-trace';
import { startOtlpReceiver, type OtlpReceiver } from '@benchfleet/testing';
import { protobufTraceExporter } from './otlp-protobuf-exporter.js';

const receivers: OtlpReceiver[] = [];
afterEach(async () => {
  for (const receiver of receivers.splice(0)) await receiver.close();
});

/** Spans of every shape the fleet's can take, and some it does not (yet). */
function madeSpans(): ReadableSpan[] {
  const memory = new InMemorySpanExporter();
  const provider = new TracerProvider({
    resource: resourceFromAttributes({ 'service.name': 'worker-webshop', 'host.cores': 2 }),
    spanProcessors: [new SimpleSpanProcessor({ exporter: memory })],
  });
  const tracer = provider.getTracer('@benchfleet/telemetry', '0.1.0');
  const other = provider.getTracer('another-scope');
  const root = tracer.startSpan('benchfleet.task.attempt', {
    attributes: {
      'benchfleet.run.id': 'f2c1a9e0-1111-2222-3333-444455556666',
      'benchfleet.task.attempt': 1,
      'a.negative': -42,
      'a.large': 2 ** 60,
      'a.double': 0.00014,
      'a.bool': false,
      'a.strings': ['stop', 'length'],
      'a.numbers': [1, 2.5, -3],
      'a.with.gaps': ['x', null, 'y'],
      'a.unicode': 'café ☕ 𝄞 — naïve',
      'a.long': 'search['.padEnd(300, 'long query ') + ']',
      'a.empty': '',
    },
  });
  root.addEvent('exception', { 'exception.type': 'Error', 'exception.message': 'x'.repeat(200) });
  root.setStatus({ code: SpanStatusCode.ERROR, message: 'it failed: ünïcode' });
  const child = tracer.startSpan(
    'chat gpt-4o-mini',
    { kind: SpanKind.CLIENT, links: [{ context: root.spanContext() }] },
    trace.setSpan(context.active(), root),
  );
  child.setAttribute('gen_ai.usage.input_tokens', 812);
  child.end();
  other.startSpan('enqueue', { kind: SpanKind.PRODUCER }).end();
  root.end();
  return memory.getFinishedSpans();
}

async function received(exporter: SpanExporter, spans: ReadableSpan[], receiver: OtlpReceiver) {
  const before = receiver.spans().length;
  await new Promise<void>((resolve, reject) =>
    exporter.export(spans, (result) => (result.error ? reject(result.error) : resolve())),
  );
  await exporter.shutdown();
  return receiver
    .spans()
    .slice(before)
    .map(({ encoding: _encoding, ...span }) => span);
}

describe('encodeTraceExportRequest (through protobufTraceExporter)', () => {
  it("a collector reads from it the spans the SDK's own JSON exporter sends", async () => {
    const receiver = await startOtlpReceiver();
    receivers.push(receiver);
    const spans = madeSpans();
    const options = { url: receiver.tracesUrl, headers: {}, timeoutMillis: 10_000 };
    const fromJson = await received(new JsonExporter(options), spans, receiver);
    const fromProtobuf = await received(
      protobufTraceExporter({ ...options, compression: 'none' }),
      spans,
      receiver,
    );
    expect(fromJson).toHaveLength(3);
    expect(fromProtobuf).toEqual(fromJson);
    const attempt = fromProtobuf.find((span) => span.name === 'benchfleet.task.attempt');
    expect(attempt?.attributes['a.unicode']).toBe('café ☕ 𝄞 — naïve');
    expect(attempt?.attributes['a.large']).toBe(2 ** 60);
  });

  it('is gzipped when asked', async () => {
    const receiver = await startOtlpReceiver();
    receivers.push(receiver);
    const spans = madeSpans();
    const sent = await received(
      protobufTraceExporter({
        url: receiver.tracesUrl,
        headers: {},
        timeoutMillis: 10_000,
        compression: 'gzip',
      }),
      spans,
      receiver,
    );
    expect(sent.map((span) => span.name).sort()).toEqual(
      ['benchfleet.task.attempt', 'chat gpt-4o-mini', 'enqueue'].sort(),
    );
  });
});
