import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeLlm, type FakeLlm } from '@benchfleet/testing';
import { agentConfigSchema, createAgent as sut, priceTableSchema } from './agent-config.js';

let fake: FakeLlm;

beforeAll(async () => {
  fake = await startFakeLlm();
});

afterAll(async () => {
  await fake.close();
});

describe('agentConfigSchema', () => {
  it('fills the LLM defaults', () => {
    expect(
      agentConfigSchema.parse({ kind: 'llm', baseUrl: 'http://localhost:8000/v1', model: 'qwen' }),
    ).toEqual({
      kind: 'llm',
      baseUrl: 'http://localhost:8000/v1',
      model: 'qwen',
      temperature: 0,
      maxTokens: 512,
      timeoutMs: 60_000,
      historySteps: 8,
      maxObservationChars: 4000,
      retry: { maxRetries: 5, baseDelayMs: 500, maxDelayMs: 30_000, maxRetryAfterMs: 60_000 },
    });
  });

  it('refuses secrets: an apiKey field or credentials in the URL', () => {
    const withKey = agentConfigSchema.safeParse({
      kind: 'llm',
      baseUrl: 'http://x/v1',
      model: 'm',
      apiKey: 'sk-1',
    });
    const withUserInfo = agentConfigSchema.safeParse({
      kind: 'llm',
      baseUrl: 'http://user:pw@x/v1',
      model: 'm',
    });

    expect(withKey.success).toBe(false);
    expect(JSON.stringify(withKey.error)).not.toContain('sk-1');
    expect(withUserInfo.error?.issues.map((i) => i.message)).toEqual([
      'baseUrl must not carry credentials; pass the API key separately',
    ]);
  });

  it('reports every bad field at once', () => {
    const result = agentConfigSchema.safeParse({
      kind: 'llm',
      baseUrl: 'ftp://x',
      model: '',
      temperature: 5,
    });

    expect(result.error?.issues.map((i) => i.path.join('.'))).toEqual([
      'baseUrl',
      'model',
      'temperature',
    ]);
  });
});

describe('priceTableSchema', () => {
  it('parses per-model prices', () => {
    expect(
      priceTableSchema.parse({
        'gpt-4o-mini': { inputUsdPerMillion: 0.15, outputUsdPerMillion: 0.6 },
      }),
    ).toEqual({
      'gpt-4o-mini': { inputUsdPerMillion: 0.15, outputUsdPerMillion: 0.6 },
    });
    expect(
      priceTableSchema.safeParse({ m: { inputUsdPerMillion: -1, outputUsdPerMillion: 0 } }).success,
    ).toBe(false);
  });
});

describe('createAgent', () => {
  it('builds the rule baseline', () => {
    expect(sut({ kind: 'rule' })).toMatchObject({ name: 'rule', kind: 'rule' });
  });

  it('builds an LLM agent whose key comes from the runtime, not the config', async () => {
    const agent = sut(
      { kind: 'llm', baseUrl: fake.baseUrl, model: 'fake-model' },
      { apiKey: 'sk-runtime' },
    );

    const decision = await agent
      .start({ instruction: 'a red mug', signal: new AbortController().signal })
      .nextAction({
        observation: 'WebShop [SEP] Search',
        availableActions: { has_search_bar: true, clickables: ['search'] },
        step: 0,
      });

    expect(agent).toMatchObject({ name: 'llm:fake-model', kind: 'llm' });
    expect(decision.action).toBe('search[a red mug]');
    expect(fake.received.at(-1)?.authorization).toBe('Bearer sk-runtime');
  });

  it('throws on an invalid config', () => {
    expect(() => sut({ kind: 'gpt' })).toThrow();
  });
});
