import { createHash } from 'node:crypto';
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

// Tracing asked to capture content (a file of its own: one telemetry per process): the chat span
// carries the prompt as the GenAI conventions' `gen_ai.input.messages`.

const redisUrl = inject('redisUrl');
const prefix = uniqueQueuePrefix();
let collector: OtlpReceiver;
let telemetry: Telemetry;
let fake: FakeLlm;
let governor: LlmGovernor;

beforeAll(async () => {
  collector = await startOtlpReceiver();
  telemetry = await startTelemetry(
    telemetryConfigFromEnv({
      OTEL_EXPORTER_OTLP_ENDPOINT: collector.url,
      OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT: 'true',
    }),
    { serviceName: 'webshop-agents-content-test', logger: createLogger({ level: 'silent' }) },
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

describe('the chat span with content capture on', () => {
  it('records the input messages as role and parts, and never the key', async () => {
    const sut = new Sut({
      baseUrl: fake.baseUrl,
      model: 'fake-model',
      apiKey: 'sk-test-chat-content-01',
      temperature: 0,
      maxTokens: 50,
      timeoutMs: 600_000,
      governor,
    });
    const attribution = { runId: 'run-k', taskId: 'task-k', attempt: 1 };
    await sut.complete(
      [
        { role: 'system', content: 'You shop.' },
        { role: 'user', content: 'find a red mug' },
      ],
      new AbortController().signal,
      { attribution },
    );
    await telemetry.flush();
    const [span] = collector.spans().filter((s) => s.name === 'chat fake-model');
    expect(JSON.parse(String(span!.attributes['gen_ai.input.messages']))).toEqual([
      { role: 'system', parts: [{ type: 'text', content: 'You shop.' }] },
      { role: 'user', parts: [{ type: 'text', content: 'find a red mug' }] },
    ]);
    expect(JSON.stringify(span!.attributes)).not.toContain('sk-test-chat-content-01');
  });

  it('writes relayed messages in the conventions’ parts: tool calls, tool results, an image by the sha256 of its bytes, never its data', async () => {
    const png = Buffer.from('not really a png, but bytes');
    const span = telemetry.startLlmCall({
      baseUrl: 'http://127.0.0.1:9/v1',
      model: 'relayed',
      inputMessages: [
        {
          role: 'assistant',
          content: null,
          tool_calls: [
            { id: 'c1', type: 'function', function: { name: 'click', arguments: '{"x":1}' } },
          ],
        },
        { role: 'tool', tool_call_id: 'c1', content: 'screenshot' },
        {
          role: 'user',
          content: [
            {
              type: 'image_url',
              image_url: { url: `data:image/png;base64,${png.toString('base64')}` },
            },
          ],
        },
      ],
    });
    span.end({ outcome: 'ok' });
    await telemetry.flush();
    const [relayed] = collector.spans().filter((s) => s.name === 'chat relayed');
    const text = String(relayed!.attributes['gen_ai.input.messages']);
    expect(JSON.parse(text)).toEqual([
      {
        role: 'assistant',
        parts: [{ type: 'tool_call', id: 'c1', name: 'click', arguments: { x: 1 } }],
      },
      { role: 'tool', parts: [{ type: 'tool_call_response', id: 'c1', response: 'screenshot' }] },
      {
        role: 'user',
        parts: [
          {
            type: 'uri',
            modality: 'image',
            mime_type: 'image/png',
            uri: `sha256:${createHash('sha256').update(png).digest('hex')}`,
          },
        ],
      },
    ]);
    expect(text).not.toContain(png.toString('base64'));
  });
});
