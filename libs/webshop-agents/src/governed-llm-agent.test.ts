import { afterAll, afterEach, beforeEach, describe, expect, inject, it } from 'vitest';
import {
  BudgetExceededError,
  GovernorUnavailableError,
  LlmGovernor,
  LlmLimitsTable,
} from '@benchfleet/llm-governor';
import { freePort } from '@benchfleet/local-services';
import {
  deleteKeysWithPrefix,
  startFakeLlm,
  uniqueQueuePrefix,
  type FakeLlm,
} from '@benchfleet/testing';
import { LlmAgent as Sut, type LlmAgentOptions } from './llm-agent.js';
import { LlmUnavailableError } from './llm-errors.js';
import type { WebshopObservation } from './webshop-agent.js';

const redisUrl = inject('redisUrl');
const prefix = uniqueQueuePrefix();
const searchPage: WebshopObservation = {
  observation: 'WebShop [SEP] Instruction: [SEP] a red mug [SEP] Search',
  availableActions: { has_search_bar: true, clickables: ['search'] },
  step: 1,
};
// $1 per million tokens either way.
const limits = new LlmLimitsTable({
  prices: { 'fake-model': { inputUsdPerMillion: 1, outputUsdPerMillion: 1 } },
});

let fake: FakeLlm;
let delays: number[];
const governors: LlmGovernor[] = [];

function governor(options: { redisUrl?: string } = {}): LlmGovernor {
  const created = new LlmGovernor({ redisUrl, prefix, limits, redisTimeoutMs: 500, ...options });
  governors.push(created);
  return created;
}

function agent(gate: LlmGovernor, options: Partial<LlmAgentOptions> = {}): Sut {
  return new Sut({
    baseUrl: fake.baseUrl,
    model: 'fake-model',
    apiKey: 'sk-test-governed-agent-01',
    timeoutMs: 600_000,
    governor: gate,
    retry: { maxRetries: 3, random: () => 0.5, sleep: async (ms) => void delays.push(ms) },
    ...options,
  });
}

const attribution = (runId: string, taskId = 't1') => ({ runId, taskId, attempt: 1 });

beforeEach(async () => {
  fake = await startFakeLlm({ script: ['Action: search[red mug]'] });
  delays = [];
});

afterEach(async () => {
  await fake.close();
});

afterAll(async () => {
  for (const created of governors) await created.close();
  await deleteKeysWithPrefix(redisUrl, prefix);
});

describe('LlmAgent with the governor', () => {
  it('waits out a 429 with the fleet (no backoff of its own), and counts the cost and spend through the governor', async () => {
    fake.setFaults({ status429Times: 1, retryAfterSeconds: 1 });
    const gate = governor();
    const episode = agent(gate).start({
      instruction: 'a red mug',
      signal: new AbortController().signal,
      llm: { attribution: attribution('run-cost') },
    });

    const decision = await episode.nextAction(searchPage);

    expect(decision).toMatchObject({ action: 'search[red mug]', valid: true, llmRequests: 2 });
    expect(delays).toEqual([0]);
    const [refused, answered] = fake.arrivals;
    expect(refused?.status).toBe(429);
    expect(answered!.at - refused!.at).toBeGreaterThanOrEqual(1000);
    const cost = (decision.tokensIn + decision.tokensOut) / 1e6;
    expect(decision.costUsd).toBeCloseTo(cost, 12);
    expect((await gate.runSpend('run-cost')).usd).toBeCloseTo(cost, 12);
    const [lane] = (await gate.snapshot()).lanes;
    expect(lane).toMatchObject({ model: 'fake-model', totals: { requests: 2, rateLimited: 1 } });
  });

  it('fails at once, for every agent of the fleet, when the provider holds it off longer than a call may wait', async () => {
    fake.setFaults({ status429Times: 1, retryAfterSeconds: 120 });
    const context = { instruction: 'a red mug', signal: new AbortController().signal };
    const first = agent(governor()).start(context);
    await expect(first.nextAction(searchPage)).rejects.toBeInstanceOf(LlmUnavailableError);
    // Another worker's agent makes no request at all: the hold-off is the fleet's.
    const second = agent(governor()).start(context);
    await expect(second.nextAction(searchPage)).rejects.toThrow(/held off for 1[12]\d s/);
    expect(fake.stats.requests).toBe(1);
  });

  it('refuses a call over its task budget before sending it', async () => {
    const episode = agent(governor()).start({
      instruction: 'a red mug',
      signal: new AbortController().signal,
      llm: { attribution: attribution('run-budget'), budget: { taskUsd: 0.000_01 } },
    });
    await expect(episode.nextAction(searchPage)).rejects.toBeInstanceOf(BudgetExceededError);
    expect(fake.stats.requests).toBe(0);
  });

  it("fails as an infra fault, sending nothing, when the governor's Redis does not answer", async () => {
    const down = governor({ redisUrl: `redis://127.0.0.1:${await freePort()}` });
    const episode = agent(down).start({
      instruction: 'a red mug',
      signal: new AbortController().signal,
    });
    await expect(episode.nextAction(searchPage)).rejects.toBeInstanceOf(GovernorUnavailableError);
    expect(fake.stats.requests).toBe(0);
  });
});
