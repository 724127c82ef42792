import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, inject, it } from 'vitest';
import {
  deleteKeysWithPrefix,
  runScript,
  startFakeLlm,
  startOtlpReceiver,
  uniqueQueuePrefix,
  type ReceivedSpan,
} from '@benchfleet/testing';
import { keyFingerprint, normalizeProvider } from './index.js';

const redisUrl = inject('redisUrl');
const prefix = uniqueQueuePrefix();
const PROCESS_FILE = fileURLToPath(
  new URL('../test-support/llm-governor-telemetry-process.ts', import.meta.url),
);
const API_KEY = 'sk-telemetry-test-key-0001';

afterAll(async () => {
  await deleteKeysWithPrefix(redisUrl, prefix);
});

interface Answer {
  event: string;
  content?: string;
  status?: number;
  usage?: { prompt_tokens: number; completion_tokens: number };
  name?: string;
  shutdown?: { completed: boolean };
}

function only(spans: readonly ReceivedSpan[], predicate: (span: ReceivedSpan) => boolean) {
  const found = spans.filter(predicate);
  expect(found, spans.map((span) => `${span.name} ${span.spanId}`).join(', ')).toHaveLength(1);
  return found[0]!;
}

describe('the governor traced', () => {
  it('makes each governed call, made or relayed (through the real relay), a GenAI span under the attempt that caused it', async () => {
    const collector = await startOtlpReceiver();
    const fake = await startFakeLlm({
      script: ['search[red shirt]'],
      faults: { status429Times: 1 },
    });
    try {
      const env: NodeJS.ProcessEnv = {};
      for (const [key, value] of Object.entries(process.env))
        if (!key.startsWith('OTEL_')) env[key] = value;
      const result = await runScript(PROCESS_FILE, [], {
        ...env,
        OTEL_EXPORTER_OTLP_ENDPOINT: collector.url,
        REDIS_URL: redisUrl,
        PREFIX: prefix,
        FAKE_BASE_URL: fake.baseUrl,
        API_KEY,
      });
      expect(result.code, result.stderr).toBe(0);
      const events = result.stdout
        .split('\n')
        .filter((line) => line.startsWith('{'))
        .map((line) => JSON.parse(line) as Answer);
      const answers = events.filter((event) => event.event === 'answer');
      expect(answers.map((answer) => answer.status)).toEqual([429, 200, 200, 200]);
      expect(events.find((event) => event.event === 'refused')?.name).toBe('BudgetExceeded');
      expect(events.at(-1)).toEqual({ event: 'done', shutdown: { completed: true } });
      // The refused call never reached the provider.
      expect(fake.stats.requests).toBe(4);

      const spans = collector.spans();
      const attempt = only(spans, (s) => s.name === 'benchfleet.task.attempt');
      expect(attempt.parentSpanId).toBeUndefined();
      expect(attempt.attributes).toMatchObject({
        'benchfleet.run.id': 'run-t',
        'benchfleet.task.id': 'task-1',
        'benchfleet.task.attempt': 1,
        'benchfleet.benchmark': 'webshop',
        'benchfleet.outcome.status': 'success',
      });
      expect(attempt.resource['service.name']).toBe('worker-webshop');
      for (const span of spans) expect(span.traceId).toBe(attempt.traceId);

      const step1 = only(spans, (s) => s.attributes['benchfleet.step.number'] === 1);
      const step2 = only(spans, (s) => s.attributes['benchfleet.step.number'] === 2);
      expect(step1.parentSpanId).toBe(attempt.spanId);
      expect(step2.parentSpanId).toBe(attempt.spanId);

      const calls = spans.filter((s) => s.name === 'chat fake-model');
      expect(calls).toHaveLength(5);
      const fakeUrl = new URL(fake.baseUrl);
      const fingerprint = keyFingerprint(normalizeProvider(fake.baseUrl), API_KEY);
      for (const call of calls) {
        expect(call.kind).toBe(3);
        expect(call.attributes).toMatchObject({
          'gen_ai.operation.name': 'chat',
          'gen_ai.provider.name': 'openai',
          'gen_ai.request.model': 'fake-model',
          'gen_ai.request.temperature': 0.2,
          'server.address': '127.0.0.1',
          'server.port': Number(fakeUrl.port),
          'benchfleet.llm.key_fingerprint': fingerprint,
          'benchfleet.run.id': 'run-t',
          'benchfleet.task.id': 'task-1',
          'benchfleet.task.attempt': 1,
        });
      }
      const byStart = [...calls].sort((a, b) => Number(a.startTimeUnixNano - b.startTimeUnixNano));
      const [limited, passed, inStep, refused, relayed] = byStart as [
        ReceivedSpan,
        ReceivedSpan,
        ReceivedSpan,
        ReceivedSpan,
        ReceivedSpan,
      ];

      expect(limited.parentSpanId).toBe(attempt.spanId);
      expect(limited.status.code).toBe(2);
      expect(limited.attributes).toMatchObject({
        'error.type': '429',
        'benchfleet.llm.outcome': 'rate-limited',
      });
      expect(limited.attributes['gen_ai.usage.input_tokens']).toBeUndefined();

      const usage = answers[1]!.usage!;
      expect(passed.parentSpanId).toBe(attempt.spanId);
      expect(passed.status).toEqual({ code: 0 });
      expect(passed.attributes).toMatchObject({
        'benchfleet.llm.outcome': 'ok',
        'gen_ai.response.model': 'fake-model',
        'gen_ai.response.finish_reasons': ['stop'],
        'gen_ai.usage.input_tokens': usage.prompt_tokens,
        'gen_ai.usage.output_tokens': usage.completion_tokens,
        'benchfleet.cost.usd': (usage.prompt_tokens * 1 + usage.completion_tokens * 2) / 1_000_000,
      });
      expect(passed.attributes['gen_ai.response.id']).toMatch(/^chatcmpl-fake-\d+$/);
      expect(passed.attributes['error.type']).toBeUndefined();

      expect(inStep.parentSpanId).toBe(step2.spanId);
      expect(inStep.attributes['benchfleet.llm.outcome']).toBe('ok');

      expect(refused.parentSpanId).toBe(attempt.spanId);
      expect(refused.status.code).toBe(2);
      expect(refused.attributes).toMatchObject({
        'error.type': 'BudgetExceeded',
        'benchfleet.llm.outcome': 'refused',
      });

      for (const call of [limited, passed, inStep, refused])
        expect(call.attributes['gen_ai.request.max_tokens']).toBe(32);

      // Through the relay, from an HTTP handler: the attempt running for its attribution is its parent.
      expect(relayed.parentSpanId).toBe(attempt.spanId);
      expect(relayed.attributes).toMatchObject({
        'benchfleet.llm.outcome': 'ok',
        'gen_ai.request.top_p': 0.9,
        'gen_ai.response.model': 'fake-model',
        'gen_ai.response.finish_reasons': ['stop'],
      });
      expect(relayed.attributes['gen_ai.response.id']).toMatch(/^chatcmpl-fake-\d+$/);
      // The relayed request set no max_tokens: the span does not invent the estimate's.
      expect(relayed.attributes['gen_ai.request.max_tokens']).toBeUndefined();

      const text = JSON.stringify(spans, (_key, value: unknown) =>
        typeof value === 'bigint' ? value.toString() : value,
      );
      expect(text).not.toContain(API_KEY);
      // No prompt or reply content, as the conventions advise by default.
      expect(text).not.toContain('red shirt');
      expect(text).not.toContain('search[');
    } finally {
      await fake.close();
      await collector.close();
    }
  });
});
