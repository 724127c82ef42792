import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import {
  occupyPort,
  runScript,
  startOtlpReceiver,
  waitFor,
  type OtlpReceiver,
  type ReceivedSpan,
} from '@benchfleet/testing';

const PROCESS_FILE = fileURLToPath(
  new URL('../test-support/telemetry-process.ts', import.meta.url),
);

interface ChildEvent {
  event: string;
  enabled?: boolean;
  result?: string;
  shutdown?: { completed: boolean };
  otelModules?: string[];
}

const receivers: OtlpReceiver[] = [];
afterEach(async () => {
  for (const receiver of receivers.splice(0)) await receiver.close();
});

async function receiver(): Promise<OtlpReceiver> {
  const started = await startOtlpReceiver();
  receivers.push(started);
  return started;
}

/** This process's environment without the OTEL_* variables a developer's shell may hold. */
function childEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env))
    if (!key.startsWith('OTEL_')) env[key] = value;
  return { ...env, ...extra };
}

function eventsOf(stdout: string): ChildEvent[] {
  return stdout
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as ChildEvent);
}

function doneOf(events: ChildEvent[]): ChildEvent {
  const done = events.find((event) => event.event === 'done');
  expect(done, JSON.stringify(events)).toBeDefined();
  return done!;
}

function only(spans: readonly ReceivedSpan[], predicate: (span: ReceivedSpan) => boolean) {
  const found = spans.filter(predicate);
  expect(found, spans.map((span) => span.name).join(', ')).toHaveLength(1);
  return found[0]!;
}

/** Everything a span says, as text: for checking that no secret reached the collector. */
function allText(spans: readonly ReceivedSpan[]): string {
  return JSON.stringify(spans, (_key, value: unknown) =>
    typeof value === 'bigint' ? value.toString() : value,
  );
}

describe('tracing on (OTEL_EXPORTER_OTLP_ENDPOINT set)', () => {
  it.each([
    { protocol: 'http/protobuf', compression: 'none' },
    { protocol: 'http/json', compression: 'gzip' },
  ] as const)(
    'exports attempt, step and GenAI spans over $protocol ($compression) with their attributes and parentage',
    async ({ protocol, compression }) => {
      const collector = await receiver();
      const result = await runScript(
        PROCESS_FILE,
        [],
        childEnv({
          OTEL_EXPORTER_OTLP_ENDPOINT: collector.url,
          OTEL_EXPORTER_OTLP_PROTOCOL: protocol,
          OTEL_EXPORTER_OTLP_COMPRESSION: compression,
          OTEL_SERVICE_NAME: 'worker-webshop-test',
          OTEL_RESOURCE_ATTRIBUTES: 'deployment.environment.name=ci,team=evals%2Cfleet',
          OTEL_EXPORTER_OTLP_HEADERS: 'x-collector-key=collector-secret-42',
        }),
      );
      expect(result.code, result.stderr).toBe(0);
      const events = eventsOf(result.stdout);
      expect(events.find((event) => event.event === 'attempt')?.result).toBe('episode result');
      const done = doneOf(events);
      expect(done.shutdown).toEqual({ completed: true });
      // The check the "off" tests rely on: it does see the SDK when it is loaded.
      expect(done.otelModules!.length).toBeGreaterThan(0);

      const encoding = protocol === 'http/json' ? 'json' : 'protobuf';
      expect(collector.requests.length).toBeGreaterThan(0);
      for (const request of collector.requests) {
        expect(request).toMatchObject({ encoding, status: 200 });
        expect(request.headers['x-collector-key']).toBe('collector-secret-42');
        expect(request.headers['content-encoding']).toBe(
          compression === 'gzip' ? 'gzip' : undefined,
        );
      }
      const spans = collector.spans();
      const attempt = only(
        spans,
        (s) =>
          s.name === 'benchfleet.task.attempt' && s.attributes['benchfleet.task.attempt'] === 2,
      );
      expect(attempt.parentSpanId).toBeUndefined();
      expect(attempt.kind).toBe(1);
      expect(attempt.status).toEqual({ code: 0 });
      expect(attempt.attributes).toEqual({
        'benchfleet.run.id': 'run-1',
        'benchfleet.task.id': 'task-7',
        'benchfleet.task.attempt': 2,
        'benchfleet.benchmark': 'webshop',
        'benchfleet.task.domain': 'fashion',
        'benchfleet.worker.id': 'worker-a',
        'benchfleet.outcome.status': 'success',
        'benchfleet.outcome.success': true,
        'benchfleet.outcome.reward': 1,
        'benchfleet.outcome.steps': 2,
        'benchfleet.usage.input_tokens': 20,
        'benchfleet.usage.output_tokens': 7,
        'benchfleet.cost.usd': 0.0001,
      });
      expect(attempt.resource).toMatchObject({
        'service.name': 'worker-webshop-test',
        'service.instance.id': 'worker-a',
        'deployment.environment.name': 'ci',
        team: 'evals,fleet',
        'telemetry.sdk.name': 'opentelemetry',
        'telemetry.sdk.language': 'nodejs',
      });
      expect(attempt.scope.name).toBe('@benchfleet/telemetry');

      const inTrace = spans.filter((s) => s.traceId === attempt.traceId);
      const step1 = only(inTrace, (s) => s.attributes['benchfleet.step.number'] === 1);
      const step2 = only(inTrace, (s) => s.attributes['benchfleet.step.number'] === 2);
      for (const step of [step1, step2]) {
        expect(step.name).toBe('benchfleet.step');
        expect(step.parentSpanId).toBe(attempt.spanId);
      }
      // Every span of the attempt names it, whoever made it (docs/tracing.md).
      const ids = {
        'benchfleet.run.id': 'run-1',
        'benchfleet.task.id': 'task-7',
        'benchfleet.task.attempt': 2,
      };
      expect(step1.attributes).toMatchObject({
        ...ids,
        'benchfleet.step.action_kind': 'search',
        'benchfleet.usage.input_tokens': 20,
        'benchfleet.usage.output_tokens': 7,
      });
      expect(typeof step1.attributes['benchfleet.step.latency_ms']).toBe('number');
      expect(step2.attributes).toEqual({
        ...ids,
        'benchfleet.step.number': 2,
        'benchfleet.step.action_kind': 'click',
        'benchfleet.step.latency_ms': 25,
        'benchfleet.step.reward': 0,
      });
      // A recorded step spans the latency it reported, ending when it was recorded.
      expect(step2.endTimeUnixNano - step2.startTimeUnixNano).toBe(25_000_000n);

      const chat = only(inTrace, (s) => s.name === 'chat gpt-4o-mini');
      expect(chat.parentSpanId).toBe(step1.spanId);
      expect(chat.kind).toBe(3);
      expect(chat.status).toEqual({ code: 0 });
      expect(chat.attributes).toEqual({
        'gen_ai.operation.name': 'chat',
        'gen_ai.provider.name': 'openai',
        'gen_ai.request.model': 'gpt-4o-mini',
        'gen_ai.request.max_tokens': 64,
        'gen_ai.request.temperature': 0.5,
        'gen_ai.response.model': 'gpt-4o-mini-2024-07-18',
        'gen_ai.response.id': 'chatcmpl-1',
        'gen_ai.response.finish_reasons': ['stop'],
        'gen_ai.usage.input_tokens': 20,
        'gen_ai.usage.output_tokens': 7,
        'server.address': 'api.openai.com',
        'server.port': 443,
        'benchfleet.llm.outcome': 'ok',
        'benchfleet.llm.waited_ms': 3,
        'benchfleet.llm.key_fingerprint': 'a1b2c3d4e5f6',
        'benchfleet.cost.usd': 0.0001,
        'benchfleet.run.id': 'run-1',
        'benchfleet.task.id': 'task-7',
        'benchfleet.task.attempt': 2,
      });

      const limited = only(inTrace, (s) => s.name === 'chat local-model');
      expect(limited.parentSpanId).toBe(attempt.spanId);
      expect(limited.status.code).toBe(2);
      // Made without an attribution of its own: it has the attempt's from the context.
      expect(limited.attributes).toMatchObject({
        ...ids,
        'error.type': '429',
        'server.address': '127.0.0.1',
        'server.port': 9,
        'benchfleet.llm.outcome': 'rate-limited',
      });

      // Served from an HTTP handler: linked to the attempt by `within`, a root span without it.
      const linked = only(spans, (s) => s.name === 'chat relayed-linked');
      expect(linked.traceId).toBe(attempt.traceId);
      expect(linked.parentSpanId).toBe(attempt.spanId);
      expect(linked.attributes).toMatchObject({ ...ids, 'error.type': 'TIMEOUT' });
      const unlinked = only(spans, (s) => s.name === 'chat relayed-unlinked');
      expect(unlinked.parentSpanId).toBeUndefined();
      expect(unlinked.traceId).not.toBe(attempt.traceId);
      expect(unlinked.attributes['benchfleet.run.id']).toBeUndefined();

      const crashed = only(spans, (s) => s.attributes['benchfleet.task.attempt'] === 3);
      expect(crashed.status.code).toBe(2);
      expect(crashed.status.message).toBe('provider said: bad key sk-***');
      expect(crashed.attributes['error.type']).toBe('EpisodeCrashed');
      expect(crashed.events).toEqual([
        {
          name: 'exception',
          attributes: {
            'exception.type': 'EpisodeCrashed',
            'exception.message': 'provider said: bad key sk-***',
          },
        },
      ]);
      const handedBack = only(spans, (s) => s.attributes['benchfleet.task.attempt'] === 4);
      expect(handedBack.status).toEqual({
        code: 2,
        message: 'Bytebot unreachable at http://admin:***@bytebot:9991',
      });
      expect(handedBack.attributes).toMatchObject({
        'error.type': 'infra',
        'benchfleet.outcome.status': 'error',
        'benchfleet.outcome.error_class': 'infra',
      });
      expect(handedBack.events).toEqual([]);

      const text = allText(spans);
      for (const secret of ['collector-secret-42', 'sk-test-secret', 'hunter2'])
        expect(text).not.toContain(secret);
      // No prompt or reply content: the conventions' content attributes are opt-in, and never set.
      for (const span of spans)
        for (const key of Object.keys(span.attributes))
          expect(key).not.toMatch(/^gen_ai\.(input|output|prompt|completion|system_instructions)/);
    },
  );
});

describe('tracing off', () => {
  it('is off by default: the work runs as it would, and no OpenTelemetry module is ever loaded', async () => {
    const collector = await receiver();
    const result = await runScript(
      PROCESS_FILE,
      [],
      // Everything but the endpoint: none of it turns tracing on.
      childEnv({ OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json', OTEL_SERVICE_NAME: 'unused' }),
    );
    expect(result.code, result.stderr).toBe(0);
    const events = eventsOf(result.stdout);
    expect(events[0]).toEqual({ event: 'started', enabled: false });
    expect(events.map((event) => event.event)).toEqual([
      'started',
      'attempt',
      'crashed',
      'handed back',
      'worked',
      'done',
    ]);
    expect(events[1]?.result).toBe('episode result');
    const done = doneOf(events);
    expect(done.shutdown).toEqual({ completed: true });
    expect(done.otelModules).toEqual([]);
    expect(collector.requests).toEqual([]);
  });

  it('stays off with OTEL_SDK_DISABLED=true even when an endpoint is set: nothing reaches the collector', async () => {
    const collector = await receiver();
    const result = await runScript(
      PROCESS_FILE,
      [],
      childEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: collector.url, OTEL_SDK_DISABLED: 'true' }),
    );
    expect(result.code, result.stderr).toBe(0);
    const events = eventsOf(result.stdout);
    expect(events[0]).toEqual({ event: 'started', enabled: false });
    expect(doneOf(events).otelModules).toEqual([]);
    expect(collector.requests).toEqual([]);
  });
});

describe('a collector that is away', () => {
  it('refusing connections: the work is done, shutdown completes, and the failures are told once with a count', async () => {
    // A port nothing listens on.
    const port = await occupyPort();
    await port.release();
    const result = await runScript(
      PROCESS_FILE,
      [],
      childEnv({
        SCENARIO: 'failing',
        OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${port.port}`,
        SHUTDOWN_TIMEOUT_MS: '1000',
      }),
    );
    expect(result.code, result.stderr).toBe(0);
    const events = eventsOf(result.stdout);
    expect(events.find((event) => event.event === 'attempt')?.result).toBe('episode result');
    expect(doneOf(events).shutdown).toEqual({ completed: true });
    // Three failed exports at least (one per flush): told once, then once more with the count.
    const told = result.stderr
      .split('\n')
      .filter((line) => line.includes('could not export spans'));
    expect(told, result.stderr).toHaveLength(2);
    expect(JSON.parse(told[0]!)).toMatchObject({
      level: 40,
      endpoint: `http://127.0.0.1:${port.port}/v1/traces`,
    });
    expect((JSON.parse(told[1]!) as { repeated: number }).repeated).toBeGreaterThanOrEqual(2);
  });

  it('taking requests and never answering: the attempt runs while an export hangs, and shutdown gives up at its deadline', async () => {
    const collector = await receiver();
    collector.hold();
    const child = spawn(process.execPath, ['--import', 'tsx', PROCESS_FILE], {
      env: childEnv({
        SCENARIO: 'held',
        OTEL_EXPORTER_OTLP_ENDPOINT: collector.url,
        SHUTDOWN_TIMEOUT_MS: '1000',
      }),
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
    try {
      await waitFor('the child to start an export', () => stdout.includes('"exporting"'), 600_000);
      await collector.until(() => collector.held() >= 1);
      // Its stdin ends too: an open pipe would keep the child alive, whatever tracing does.
      child.stdin.end('go\n');
      // Not one export was answered, yet the process finishes its work and ends by itself.
      expect(await exited, stderr).toBe(0);
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
    }
    const events = eventsOf(stdout);
    expect(events.find((event) => event.event === 'attempt')?.result).toBe('episode result');
    expect(doneOf(events).shutdown).toEqual({ completed: false });
    expect(stderr).toContain('did not take the last spans before the shutdown deadline');
    expect(collector.requests.length).toBeGreaterThan(0);
    expect(collector.requests.every((request) => request.status === 0)).toBe(true);
  });
});
