import { gzipSync } from 'node:zlib';
import { afterEach, describe, expect, it } from 'vitest';
import { startOtlpReceiver as sut, type OtlpReceiver } from './otlp-receiver.js';

let receiver: OtlpReceiver | undefined;
afterEach(async () => {
  await receiver?.close();
  receiver = undefined;
});

/** An OTLP/JSON export of one span, as the specification writes it (hex ids, int64 as strings). */
const JSON_EXPORT = {
  resourceSpans: [
    {
      resource: { attributes: [{ key: 'service.name', value: { stringValue: 'hand-made' } }] },
      scopeSpans: [
        {
          scope: { name: 'by-hand', version: '1' },
          spans: [
            {
              traceId: '5B8EFFF798038103D269B633813FC60C',
              spanId: 'EEE19B7EC3C1B174',
              parentSpanId: 'EEE19B7EC3C1B173',
              name: 'chat m',
              kind: 3,
              startTimeUnixNano: '1544712660000000000',
              endTimeUnixNano: '1544712661000000000',
              attributes: [
                { key: 'gen_ai.usage.input_tokens', value: { intValue: '12' } },
                { key: 'gen_ai.request.temperature', value: { doubleValue: 0.5 } },
                {
                  key: 'gen_ai.response.finish_reasons',
                  value: { arrayValue: { values: [{ stringValue: 'stop' }] } },
                },
              ],
              links: [{ traceId: '0AF7651916CD43DD8448EB211C80319C', spanId: 'B7AD6B7169203331' }],
              status: { code: 2, message: 'boom' },
            },
          ],
        },
      ],
    },
  ],
};

async function post(url: string, body: Uint8Array | string, headers: Record<string, string>) {
  const response = await fetch(url, { method: 'POST', body, headers });
  return { status: response.status, text: await response.text() };
}

describe('startOtlpReceiver', () => {
  it('reads OTLP/JSON, gzipped too, into the same span shape as protobuf', async () => {
    receiver = await sut();
    const body = gzipSync(JSON.stringify(JSON_EXPORT));
    const answer = await post(receiver.tracesUrl, body, {
      'content-type': 'application/json',
      'content-encoding': 'gzip',
    });
    expect(answer).toEqual({ status: 200, text: '{}' });
    expect(receiver.spans()).toEqual([
      {
        traceId: '5b8efff798038103d269b633813fc60c',
        spanId: 'eee19b7ec3c1b174',
        parentSpanId: 'eee19b7ec3c1b173',
        name: 'chat m',
        kind: 3,
        startTimeUnixNano: 1544712660000000000n,
        endTimeUnixNano: 1544712661000000000n,
        attributes: {
          'gen_ai.usage.input_tokens': 12,
          'gen_ai.request.temperature': 0.5,
          'gen_ai.response.finish_reasons': ['stop'],
        },
        status: { code: 2, message: 'boom' },
        events: [],
        links: [{ traceId: '0af7651916cd43dd8448eb211c80319c', spanId: 'b7ad6b7169203331' }],
        resource: { 'service.name': 'hand-made' },
        scope: { name: 'by-hand', version: '1' },
        encoding: 'json',
      },
    ]);
  });

  it('refuses what a collector refuses: other content types, unreadable bodies, other paths', async () => {
    receiver = await sut();
    expect((await post(receiver.tracesUrl, 'x', { 'content-type': 'text/plain' })).status).toBe(
      415,
    );
    const garbage = await post(receiver.tracesUrl, new Uint8Array([0xff, 0xff, 0xff]), {
      'content-type': 'application/x-protobuf',
    });
    expect(garbage.status).toBe(400);
    expect(garbage.text).toMatch(/^unreadable protobuf body/);
    expect((await post(`${receiver.url}/v1/metrics`, '{}', {})).status).toBe(404);
    expect(receiver.requests.map((request) => [request.encoding, request.status])).toEqual([
      ['unsupported', 415],
      ['protobuf', 400],
    ]);
    expect(receiver.spans()).toEqual([]);
  });

  it('holds requests unanswered until released', async () => {
    receiver = await sut();
    receiver.hold();
    const answered = post(receiver.tracesUrl, '{}', { 'content-type': 'application/json' });
    await receiver.until(() => receiver!.held() === 1);
    expect(receiver.requests[0]?.status).toBe(0);
    receiver.release();
    expect((await answered).status).toBe(200);
    expect(receiver.held()).toBe(0);
  });
});
