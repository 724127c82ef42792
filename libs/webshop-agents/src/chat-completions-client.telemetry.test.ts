import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createLogger } from '@benchfleet/core';
import { LlmGovernor } from '@benchfleet/llm-governor';
import { startTelemetry, telemetryConfigFromEnv, type Telemetry } from '@benchfleet/telemetry';
import {
  deleteKeysWithPrefix,
  startFakeLlm,
  startOtlpReceiver,
  uniqueQueuePrefix,
  type FakeLlm,
  type OtlpReceiver,
} from '@benchfleet/testing';
import { ChatCompletionsClient as Sut } from './chat-completions-client.js';

const redisUrl = inject('redisUrl');
const prefix = uniqueQueuePrefix();
let collector: OtlpReceiver;
let telemetry: Telemetry;
let fake: FakeLlm;
let governor: LlmGovernor;

beforeAll(async () => {
  collector = await startOtlpReceiver();
  // Tracing in this test process (a file of its own): what a worker does at start.
  telemetry = await startTelemetry(
    telemetryConfigFromEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: collector.url }),
    { serviceName: 'webshop-agents-test', logger: createLogger({ level: 'silent' }) },
  );
  fake = await startFakeLlm({ script: ['Action: search[red mug]'] });
  governor = new LlmGovernor({ redisUrl, prefix });
});

afterAll(async () => {
  await telemetry.shutdown();
  await governor.close();
  await fake.close();
  await collector.close();
  await deleteKeysWithPrefix(redisUrl, prefix);
});

describe('the chat client traced through the governor', () => {
  it('tells each request its GenAI span: what it asked of the model, what the answer said, and why a request failed', async () => {
    fake.setFaults({ malformedTimes: 1 });
    const sut = new Sut({
      baseUrl: fake.baseUrl,
      model: 'fake-model',
      apiKey: 'sk-test-chat-telemetry-01',
      temperature: 0.3,
      maxTokens: 50,
      timeoutMs: 600_000,
      governor,
      retry: { maxRetries: 2, random: () => 0.5, sleep: async () => undefined },
    });
    const attribution = { runId: 'run-c', taskId: 'task-c', attempt: 1 };
    const completion = await telemetry.attemptSpan(
      { ...attribution, benchmark: 'webshop', workerId: 'worker-c' },
      () =>
        sut.complete([{ role: 'user', content: 'find a red mug' }], new AbortController().signal, {
          attribution,
        }),
    );
    expect(completion.requests).toBe(2);
    await telemetry.flush();

    const spans = collector.spans();
    const attempt = spans.find((span) => span.name === 'benchfleet.task.attempt');
    const calls = spans
      .filter((span) => span.name === 'chat fake-model')
      .sort((a, b) => Number(a.startTimeUnixNano - b.startTimeUnixNano));
    expect(calls).toHaveLength(2);
    const [unreadable, answered] = calls as [(typeof calls)[0], (typeof calls)[0]];
    for (const call of calls) {
      expect(call.parentSpanId).toBe(attempt?.spanId);
      expect(call.attributes).toMatchObject({
        'gen_ai.request.temperature': 0.3,
        'gen_ai.request.max_tokens': 50,
      });
    }
    // A 200 whose body could not be read is not a "200" error.
    expect(unreadable.status.code).toBe(2);
    expect(unreadable.attributes).toMatchObject({
      'benchfleet.llm.outcome': 'failed',
      'error.type': 'MALFORMED_RESPONSE',
    });
    expect(answered.status.code).toBe(0);
    expect(answered.attributes).toMatchObject({
      'benchfleet.llm.outcome': 'ok',
      'gen_ai.response.model': 'fake-model',
      'gen_ai.response.finish_reasons': ['stop'],
      'gen_ai.usage.input_tokens': completion.promptTokens,
      'gen_ai.usage.output_tokens': completion.completionTokens,
    });
    expect(answered.attributes['gen_ai.response.id']).toMatch(/^chatcmpl-fake-\d+$/);
    // Content capture is off by default: the prompt is in no span.
    for (const span of spans) expect(span.attributes['gen_ai.input.messages']).toBeUndefined();
    expect(JSON.stringify(spans.map((span) => span.attributes))).not.toContain('find a red mug');
  });
});
