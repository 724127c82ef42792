import { Writable } from 'node:stream';
import { afterAll, afterEach, describe, expect, inject, it } from 'vitest';
import { createLogger } from '@benchfleet/core';
import {
  BYTEBOT_PROXY_TOOLS,
  deleteKeysWithPrefix,
  startFakeBytebot,
  startFakeLlm,
  uniqueQueuePrefix,
  waitFor,
  withFakeScenario,
  type FakeBytebot,
  type FakeBytebotOptions,
  type FakeLlm,
  type FakeLlmOptions,
} from '@benchfleet/testing';
import {
  LlmGovernor,
  LlmLimitsTable,
  type LlmAttribution,
  type LlmGovernorOptions,
} from '@benchfleet/llm-governor';
import {
  startLlmRelay as sut,
  type LlmRelay,
  type LlmRelayOptions,
  type RelayBudgetEvent,
  type RelayedCall,
  type RelayRefusal,
} from './llm-relay.js';
import { RelayedCallLedger } from './relayed-call-ledger.js';

const redisUrl = inject('redisUrl');
const prefix = uniqueQueuePrefix();
// Not an `sk-` key: the log redaction's pattern must not be what keeps it out of the lines.
const API_KEY = 'relay-held-key-5f0c9e2a71d4';
const MODEL = 'fake-model';
const bytebotModel = { provider: 'proxy', name: MODEL, title: 'Fake', contextWindow: 128_000 };

const closers: (() => Promise<void>)[] = [];
const governors: LlmGovernor[] = [];

afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

afterAll(async () => {
  for (const governor of governors) await governor.close();
  await deleteKeysWithPrefix(redisUrl, prefix);
});

async function provider(options: FakeLlmOptions = {}): Promise<FakeLlm> {
  const fake = await startFakeLlm({ models: [MODEL], ...options });
  closers.push(() => fake.close());
  return fake;
}

function governor(fake: FakeLlm, options: Partial<LlmGovernorOptions> = {}): LlmGovernor {
  const made = new LlmGovernor({
    redisUrl,
    prefix,
    limits: new LlmLimitsTable({ prices: { [MODEL]: fake.price } }),
    ...options,
  });
  governors.push(made);
  return made;
}

interface Reports {
  calls: RelayedCall[];
  refusals: RelayRefusal[];
  budgets: RelayBudgetEvent[];
}

async function relay(
  fake: FakeLlm,
  gate: LlmGovernor,
  options: Partial<LlmRelayOptions> = {},
): Promise<LlmRelay & Reports> {
  const reports: Reports = { calls: [], refusals: [], budgets: [] };
  const started = await sut({
    governor: gate,
    upstream: { baseUrl: fake.baseUrl, apiKey: API_KEY },
    models: [{ name: MODEL, title: 'Fake Model' }],
    currentAttempt: () => null,
    onCall: (call) => reports.calls.push(call),
    onRefused: (refusal) => reports.refusals.push(refusal),
    onBudgetExceeded: (event) => reports.budgets.push(event),
    ...options,
  });
  closers.push(() => started.close());
  return Object.assign(reports, started);
}

async function bytebot(proxy: LlmRelay, options: FakeBytebotOptions = {}): Promise<FakeBytebot> {
  const agent = await startFakeBytebot({
    pendingDelayMs: 5,
    stepIntervalMs: 5,
    llmProxyUrl: proxy.url,
    ...options,
  });
  closers.push(() => agent.close());
  return agent;
}

async function runTask(agent: FakeBytebot, scenario: string, ends: string[]): Promise<string> {
  const response = await fetch(`${agent.url}/tasks`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      description: withFakeScenario('Open the terminal', scenario),
      model: bytebotModel,
    }),
  });
  expect(response.status).toBe(201);
  const { id } = (await response.json()) as { id: string };
  await waitFor(
    `task ${id} to end`,
    () => ends.includes(agent.tasks().find((t) => t.id === id)?.status ?? ''),
    600_000,
    10,
  );
  return id;
}

const statusOf = (agent: FakeBytebot, id: string) => agent.tasks().find((t) => t.id === id)?.status;

/** A chat completion body as Bytebot's proxy client sends it. */
const bytebotBody = (model = MODEL) => ({
  model,
  messages: [
    { role: 'system', content: 'You are Bytebot.' },
    { role: 'user', content: 'Open the terminal' },
  ],
  max_tokens: 8192,
  tools: BYTEBOT_PROXY_TOOLS,
  reasoning_effort: 'high',
});

async function post(url: string, body: unknown): Promise<Response> {
  return fetch(`${url}/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: 'Bearer dummy-key-for-proxy' },
    body: JSON.stringify(body),
  });
}

let attempts = 0;
function attribution(attempt = 1): LlmAttribution {
  attempts += 1;
  return { runId: `run-${attempts}`, taskId: `task-${attempts}`, attempt };
}

describe('LLM relay (Bytebot proxy mode)', () => {
  it('serves the model list as Bytebot reads it: /model/info in LiteLLM shape, mapped by the agent to proxy models', async () => {
    const fake = await provider();
    const proxy = await relay(fake, governor(fake), {
      models: [
        { name: MODEL, title: 'Fake Model' },
        { name: 'openai/gpt-4o', upstream: 'gpt-4o', title: 'GPT-4o' },
      ],
    });
    expect(await (await fetch(`${proxy.url}/model/info`)).json()).toEqual({
      data: [
        {
          model_name: 'Fake Model',
          litellm_params: { model: MODEL },
          model_info: { id: MODEL, mode: 'chat' },
        },
        {
          model_name: 'GPT-4o',
          litellm_params: { model: 'openai/gpt-4o' },
          model_info: { id: 'openai/gpt-4o', mode: 'chat' },
        },
      ],
    });
    const agent = await bytebot(proxy);
    expect(await (await fetch(`${agent.url}/tasks/models`)).json()).toEqual([
      { provider: 'proxy', name: MODEL, title: 'Fake Model', contextWindow: 128_000 },
      { provider: 'proxy', name: 'openai/gpt-4o', title: 'GPT-4o', contextWindow: 128_000 },
    ]);
    expect(await (await fetch(`${proxy.url}/v1/models`)).json()).toMatchObject({
      object: 'list',
      data: [{ id: MODEL }, { id: 'openai/gpt-4o' }],
    });
    // No call was made for a list: the provider never heard of it.
    expect(fake.stats.requests + fake.stats.modelListings).toBe(0);
  });

  it("relays every step's call through the governor, attributed to the running attempt: tokens and cost per attempt and per step match the provider's bill", async () => {
    const fake = await provider({
      script: [
        'Looking around.',
        {
          content: 'Let me look again.',
          toolCalls: [{ name: 'computer_screenshot', arguments: {} }],
        },
        {
          content: null,
          toolCalls: [
            { name: 'set_task_status', arguments: { status: 'completed', description: 'Done.' } },
          ],
        },
      ],
    });
    const gate = governor(fake);
    let running: LlmAttribution | null = attribution(1);
    const first = running;
    const ledger = new RelayedCallLedger(first);
    const proxy = await relay(fake, gate, {
      currentAttempt: () => running,
      onCall: (call) => {
        proxy.calls.push(call);
        ledger.record(call);
      },
    });
    const agent = await bytebot(proxy);
    const id = await runTask(agent, 'completes', ['COMPLETED', 'FAILED']);
    expect(statusOf(agent, id)).toBe('COMPLETED');

    // Bytebot asked with its dummy key; the provider got the relay's key, and the upstream model.
    expect(agent.llmCalls(id).map((c) => c.authorization)).toEqual(
      Array(3).fill('Bearer dummy-key-for-proxy'),
    );
    expect(fake.received.map((r) => [r.authorization, r.model])).toEqual(
      Array(3).fill([`Bearer ${API_KEY}`, MODEL]),
    );
    const bill = fake.billed();
    expect(bill.promptTokens).toBeGreaterThan(0);

    const spend = await gate.taskSpend(first.runId, first.taskId);
    expect(spend).toMatchObject({
      tokensIn: bill.promptTokens,
      tokensOut: bill.completionTokens,
      calls: 3,
      unpricedCalls: 0,
    });
    expect(spend.usd).toBeCloseTo(bill.usd, 12);
    expect(spend.byAttempt[1]).toBeCloseTo(bill.usd, 12);
    expect((await gate.runSpend(first.runId)).usd).toBeCloseTo(bill.usd, 12);

    expect(
      proxy.calls.map((c) => [c.outcome, c.status, c.tries, c.infraFault, c.withTools]),
    ).toEqual(Array(3).fill(['ok', 200, 1, false, true]));
    for (const call of proxy.calls) expect(call.attribution).toEqual(first);

    // Each ASSISTANT message gets the one call that produced it: by its text, then by tool call id.
    const billed = fake.arrivals.map((a) => a.billed!);
    const steps = agent
      .messagesOf(id)
      .filter((m) => m.role === 'ASSISTANT')
      .map((m) => ledger.claimStep(m.content));
    expect(steps.map((s) => [s.calls.length, s.tokensIn, s.tokensOut])).toEqual(
      billed.map((b) => [1, b.promptTokens, b.completionTokens]),
    );
    expect(steps.map((s) => s.calls[0]?.reply)).toEqual([
      { text: 'Looking around.', toolCallIds: [] },
      { text: 'Let me look again.', toolCallIds: ['call_fake_1'] },
      { text: null, toolCallIds: ['call_fake_2'] },
    ]);
    const stepCost = steps.reduce((sum, s) => sum + (s.costUsd ?? NaN), 0);
    expect(stepCost).toBeCloseTo(bill.usd, 12);
    expect(ledger.drain().calls).toEqual([]);

    // The next attempt's calls are its own.
    running = attribution(2);
    const second = running;
    fake.setScript(['Second attempt.']);
    const retried = await runTask(agent, 'completes', ['COMPLETED', 'FAILED']);
    expect(statusOf(agent, retried)).toBe('COMPLETED');
    const secondSpend = await gate.taskSpend(second.runId, second.taskId);
    expect(secondSpend.calls).toBe(4);
    expect(secondSpend.byAttempt).toEqual({ 2: expect.any(Number) });
    expect(secondSpend.usd + spend.usd).toBeCloseTo(fake.billed().usd, 12);
    expect((await gate.taskSpend(first.runId, first.taskId)).calls).toBe(3);
    const lane = (await gate.snapshot()).lanes.find((l) => l.model === MODEL);
    expect(lane?.totals.requests).toBeGreaterThanOrEqual(7);
    expect(lane?.concurrency.inFlight).toBe(0);
  });

  it('refuses a call at once when no attempt runs on the stack: a 403 the agent does not retry, nothing sent to the provider, the orphan task fails', async () => {
    const fake = await provider({ script: ['ok'] });
    const proxy = await relay(fake, governor(fake), { currentAttempt: () => null });
    const agent = await bytebot(proxy);
    const id = await runTask(agent, 'completes', ['COMPLETED', 'FAILED']);

    expect(statusOf(agent, id)).toBe('FAILED');
    expect(fake.stats.requests).toBe(0);
    expect(agent.llmCalls(id).map((c) => [c.requests, c.status, c.outcome])).toEqual([
      [1, 403, 'failed'],
    ]);
    expect(agent.llmCalls(id)[0]?.answer).toMatchObject({
      error: { type: 'permission_error', code: 'no_running_attempt' },
    });
    expect(proxy.refusals).toEqual([
      expect.objectContaining({ reason: 'no-running-attempt', attribution: null, status: 403 }),
    ]);
    expect(proxy.calls).toEqual([]);

    // An attempt the worker still names, but Postgres says is over (the governor's check): refused too.
    const stale = attribution(3);
    const checked = await relay(fake, governor(fake, { isAttemptRunning: () => false }), {
      currentAttempt: () => stale,
    });
    const refused = await post(checked.url, bytebotBody());
    expect(refused.status).toBe(403);
    expect(refused.headers.get('x-should-retry')).toBe('false');
    expect(checked.refusals).toEqual([
      expect.objectContaining({ reason: 'no-running-attempt', attribution: stale }),
    ]);
    expect(fake.stats.requests).toBe(0);
  });

  it("keeps the provider key to itself: not in any answer, log line, or the agent's config, even when the provider echoes it", async () => {
    const fake = await provider({
      script: ['ok'],
      faults: { status500Times: 1, status400Times: 1, echoAuthorization: true },
    });
    const lines: string[] = [];
    const logger = createLogger({
      level: 'debug',
      destination: new Writable({
        write(chunk: Buffer, _encoding, done) {
          lines.push(chunk.toString());
          done();
        },
      }),
    });
    const running = attribution();
    const agentOptions: FakeBytebotOptions = {};
    const proxy = await relay(fake, governor(fake, { logger }), {
      currentAttempt: () => running,
      logger,
      backoffMs: 10,
    });
    const agent = await bytebot(proxy, agentOptions);
    // The 500 is retried by the relay; the 400 that echoes the key is passed on, scrubbed; the task fails.
    const failed = await runTask(agent, 'completes', ['COMPLETED', 'FAILED']);
    expect(statusOf(agent, failed)).toBe('FAILED');
    const passedOn = agent.llmCalls(failed)[0]!;
    expect(passedOn.status).toBe(400);
    expect(JSON.stringify(passedOn.answer)).toContain('received Authorization: Bearer ***');
    const completed = await runTask(agent, 'completes', ['COMPLETED', 'FAILED']);
    expect(statusOf(agent, completed)).toBe('COMPLETED');
    const direct = await post(proxy.url, bytebotBody());
    const directText = await direct.text();

    // The key did go to the provider, so each check below could have failed.
    expect(fake.received.some((r) => r.authorization === `Bearer ${API_KEY}`)).toBe(true);
    expect(fake.stats.status500 + fake.stats.status400).toBe(2);
    const seenByAgent = [
      JSON.stringify(agent.llmCalls()),
      JSON.stringify(agent.tasks()),
      JSON.stringify([failed, completed].flatMap((id) => agent.messagesOf(id))),
      JSON.stringify(agentOptions),
      JSON.stringify({ ...agentOptions, llmProxyUrl: proxy.url }),
      directText,
      JSON.stringify([...direct.headers]),
      await (await fetch(`${proxy.url}/model/info`)).text(),
      await (await fetch(`${proxy.url}/v1/models`)).text(),
    ];
    for (const text of seenByAgent) expect(text).not.toContain(API_KEY);
    expect(lines.some((line) => line.includes('retrying'))).toBe(true);
    for (const line of lines) expect(line).not.toContain(API_KEY);
    expect(JSON.stringify([proxy.calls, proxy.refusals])).not.toContain(API_KEY);
  });

  it("stops on a spend limit: the call that reaches it is answered and reported, the next is refused with LiteLLM's budget error and the agent does not retry it", async () => {
    // 60 000 prompt tokens at $2.50/M: $0.15 a call, past the $0.10 limit in one call.
    const fake = await provider({ script: [{ content: 'Working on it.', promptTokens: 60_000 }] });
    const running = attribution();
    const proxy = await relay(fake, governor(fake), {
      currentAttempt: () => running,
      budget: () => ({ taskUsd: 0.1 }),
    });
    const agent = await bytebot(proxy);
    const id = await runTask(agent, 'completes', ['COMPLETED', 'FAILED']);

    expect(statusOf(agent, id)).toBe('FAILED');
    expect(fake.stats.requests).toBe(1); // the overshoot: one call
    expect(proxy.calls).toEqual([
      expect.objectContaining({ outcome: 'ok', budgetReached: 'task' }),
    ]);
    expect(proxy.budgets.map((b) => [b.scope, b.refused, b.attribution])).toEqual([
      ['task', false, running],
      ['task', true, running],
    ]);
    const refusedCall = agent.llmCalls(id)[1]!;
    expect([refusedCall.requests, refusedCall.status]).toEqual([1, 400]);
    expect(refusedCall.answer).toMatchObject({
      error: { type: 'budget_exceeded', code: 'task_budget_exceeded' },
    });
    expect(JSON.stringify(refusedCall.answer)).toMatch(/Budget has been exceeded!.*\$0\.1/);
  });

  it("retries a provider's faults within its deadline (a hung request, a 500) and gives up with a status the agent does not retry, reported as an infra fault", async () => {
    const fake = await provider({ script: ['ok'], faults: { stallTimes: 1, status500Times: 1 } });
    const running = attribution();
    const proxy = await relay(fake, governor(fake), {
      currentAttempt: () => running,
      upstreamTimeoutMs: 500,
      backoffMs: 10,
    });
    const answered = await post(proxy.url, bytebotBody());
    expect(answered.status).toBe(200);
    expect(proxy.calls).toEqual([
      expect.objectContaining({ outcome: 'ok', tries: 3, infraFault: false }),
    ]);

    fake.setFaults({ status500Times: 100 });
    const gaveUp = await relay(fake, governor(fake), {
      currentAttempt: () => running,
      maxTries: 3,
      backoffMs: 10,
    });
    const agent = await bytebot(gaveUp);
    const id = await runTask(agent, 'completes', ['COMPLETED', 'FAILED']);
    expect(statusOf(agent, id)).toBe('FAILED');
    expect(agent.llmCalls(id).map((c) => [c.requests, c.status])).toEqual([[1, 502]]);
    expect(gaveUp.calls).toEqual([
      expect.objectContaining({
        outcome: 'provider-unavailable',
        status: 502,
        tries: 3,
        infraFault: true,
      }),
    ]);
    expect(fake.stats.status500).toBe(1 + 3);

    // Past the relay's deadline: a 504.
    fake.setFaults({ stallTimes: 100 });
    const late = await relay(fake, governor(fake), {
      currentAttempt: () => running,
      deadlineMs: 300,
    });
    const timedOut = await post(late.url, bytebotBody());
    expect(timedOut.status).toBe(504);
    expect(timedOut.headers.get('x-should-retry')).toBe('false');
    expect(await timedOut.json()).toMatchObject({ error: { code: 'relay_deadline' } });
    expect(late.calls).toEqual([
      expect.objectContaining({ outcome: 'provider-unavailable', infraFault: true }),
    ]);
  });

  // Once: an answer of content null was relayed as a step, and nothing bounded what was read
  // (10 MB answers took a worker from 125 to 655 MB).
  it("retries an answer with neither content nor a tool call, and stops reading an answer past its limit: the provider's fault, naming it", async () => {
    const fake = await provider({ script: [{ content: null }, 'ok'] });
    const running = attribution();
    const proxy = await relay(fake, governor(fake), {
      currentAttempt: () => running,
      backoffMs: 10,
      maxTries: 2,
    });
    const answered = await post(proxy.url, bytebotBody());
    expect(answered.status).toBe(200);
    expect(proxy.calls).toEqual([expect.objectContaining({ outcome: 'ok', tries: 2 })]);

    fake.setScript([{ content: null }]);
    const empty = await post(proxy.url, bytebotBody());
    expect(empty.status).toBe(502);
    expect(await empty.json()).toMatchObject({
      error: {
        message:
          'the provider gave no answer in 2 requests (last: HTTP 200 with content null and no tool call)',
      },
    });

    fake.setScript(['x'.repeat(10 * 1024 * 1024)]);
    const large = await post(proxy.url, bytebotBody());
    expect(large.status).toBe(502);
    expect(await large.json()).toMatchObject({
      error: {
        message: `the provider gave no answer in 2 requests (last: HTTP 200 with an answer larger than the limit of ${4 * 1024 * 1024} bytes)`,
      },
    });
    expect(proxy.calls.slice(1)).toEqual([
      expect.objectContaining({ outcome: 'provider-unavailable', infraFault: true, tries: 2 }),
      expect.objectContaining({ outcome: 'provider-unavailable', infraFault: true, tries: 2 }),
    ]);
  });

  it('lets go of the provider call when the agent aborts it (a cancelled task), and settles its permit', async () => {
    const fake = await provider({ script: ['ok'] });
    fake.hold();
    const gate = governor(fake);
    const running = attribution();
    const proxy = await relay(fake, gate, { currentAttempt: () => running });
    const agent = await bytebot(proxy);
    const response = await fetch(`${agent.url}/tasks`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        description: withFakeScenario('x', 'completes'),
        model: bytebotModel,
      }),
    });
    const { id } = (await response.json()) as { id: string };
    await fake.until(() => fake.held() === 1);
    await fetch(`${agent.url}/tasks/${id}/cancel`, { method: 'POST' });
    await waitFor('the relayed call to be reported', () => proxy.calls.length === 1, 600_000, 10);
    expect(proxy.calls[0]).toMatchObject({ outcome: 'aborted', status: 0, tokensIn: 0 });
    const lane = (await gate.snapshot()).lanes.find((l) => l.model === MODEL);
    expect(lane?.concurrency.inFlight).toBe(0);
    fake.release();
  });

  it('refuses what it cannot forward, naming why: an unknown model, a streamed request, a body that is not JSON', async () => {
    const fake = await provider();
    const running = attribution();
    const proxy = await relay(fake, governor(fake), { currentAttempt: () => running });
    const unknown = await post(proxy.url, bytebotBody('gpt-5'));
    expect(unknown.status).toBe(400);
    expect(await unknown.json()).toMatchObject({ error: { code: 'model_not_found' } });
    const streamed = await post(proxy.url, { ...bytebotBody(), stream: true });
    expect(streamed.status).toBe(400);
    const garbage = await fetch(`${proxy.url}/v1/chat/completions`, { method: 'POST', body: '{' });
    expect(garbage.status).toBe(400);
    expect(proxy.refusals.map((r) => r.reason)).toEqual([
      'unknown-model',
      'bad-request',
      'bad-request',
    ]);
    // By title, as LiteLLM routes by model_name: accepted, and forwarded as sent.
    expect((await post(proxy.url, bytebotBody('Fake Model'))).status).toBe(200);
    expect(fake.received.map((r) => [r.model, r.body['reasoning_effort']])).toEqual([
      [MODEL, 'high'],
    ]);

    // A model told to drop what it refuses: under its upstream name, without reasoning_effort.
    const dropping = await relay(fake, governor(fake), {
      currentAttempt: () => running,
      models: [{ name: 'openai/gpt-4o', upstream: MODEL, dropParams: ['reasoning_effort'] }],
    });
    expect((await post(dropping.url, bytebotBody('openai/gpt-4o'))).status).toBe(200);
    expect(fake.received[1]?.model).toBe(MODEL);
    expect(fake.received[1]?.body).not.toHaveProperty('reasoning_effort');
    expect(fake.received[1]?.body).toHaveProperty('tools');
  });
});
