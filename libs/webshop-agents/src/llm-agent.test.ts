import { inspect } from 'node:util';
import { pino } from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startFakeLlm, type FakeLlm } from '@benchfleet/testing';
import { LlmAgent, type LlmAgentOptions } from './llm-agent.js';
import { LlmRequestError, LlmUnavailableError } from './llm-errors.js';
import type { WebshopObservation } from './webshop-agent.js';

const API_KEY = 'sk-test-3f9a7c21d4e8b6a0';
const INSTRUCTION = 'i would like a 3 ounce bottle of bright citrus deodorant for sensitive skin';

const searchPage: WebshopObservation = {
  observation: `WebShop [SEP] Instruction: [SEP] ${INSTRUCTION} [SEP] Search`,
  availableActions: { has_search_bar: true, clickables: ['search'] },
  step: 0,
};
const resultsPage: WebshopObservation = {
  observation: `Instruction: [SEP] ${INSTRUCTION} [SEP] Back to Search [SEP] Page 1 (Total results: 2) [SEP] Next > [SEP] B0TEST0001 [SEP] Bright Citrus Deodorant [SEP] $10.99 [SEP] B0TEST0002 [SEP] Ginger Fresh Deodorant [SEP] $12.99`,
  availableActions: {
    has_search_bar: false,
    clickables: ['back to search', 'next >', 'b0test0001', 'b0test0002'],
  },
  step: 1,
};
const itemPage: WebshopObservation = {
  observation: `Instruction: [SEP] ${INSTRUCTION} [SEP] Back to Search [SEP] < Prev [SEP] scent [SEP] bright citrus [SEP] Bright Citrus Deodorant [SEP] Price: $10.99 [SEP] Buy Now`,
  availableActions: {
    has_search_bar: false,
    clickables: [
      'back to search',
      '< prev',
      'description',
      'features',
      'reviews',
      'buy now',
      'bright citrus',
    ],
  },
  step: 2,
};

let fake: FakeLlm;
let delays: number[];
let logLines: string[];

beforeEach(async () => {
  fake = await startFakeLlm({ models: ['fake-model'] });
  delays = [];
  logLines = [];
});

afterEach(async () => {
  await fake.close();
});

function agent(options: Partial<LlmAgentOptions> = {}): LlmAgent {
  return new LlmAgent({
    baseUrl: fake.baseUrl,
    model: 'fake-model',
    apiKey: API_KEY,
    timeoutMs: 600_000,
    logger: pino({ level: 'trace' }, { write: (line: string) => void logLines.push(line) }),
    ...options,
    retry: {
      maxRetries: 3,
      random: () => 0.5,
      sleep: async (ms) => {
        delays.push(ms);
      },
      ...options.retry,
    },
  });
}

function start(sut: LlmAgent, signal = new AbortController().signal) {
  return sut.start({ instruction: `Instruction: ${INSTRUCTION}`, signal });
}

function expectNoKey(error: unknown): void {
  const views = [
    String(error),
    JSON.stringify(error),
    inspect(error, { depth: 10, showHidden: true }),
    (error as Error).stack ?? '',
  ];
  for (const view of views) expect(view).not.toContain(API_KEY);
  expect(logLines.join('')).not.toContain(API_KEY);
}

describe('LlmAgent', () => {
  it('plays an episode against an OpenAI-compatible server, sending the key', async () => {
    const sut = agent();
    const episode = start(sut);

    const decisions = [
      await episode.nextAction(searchPage),
      await episode.nextAction(resultsPage),
      await episode.nextAction(itemPage),
    ];

    expect(sut.name).toBe('llm:fake-model');
    expect(decisions.map((d) => [d.action, d.kind, d.valid])).toEqual([
      [`search[${INSTRUCTION}]`, 'search', true],
      ['click[b0test0001]', 'click', true],
      ['click[buy now]', 'click', true],
    ]);
    expect(decisions[0]?.thought).toBe('I will search for the instruction.');
    expect(decisions[0]?.raw).toContain('Action: search[');
    expect(fake.received.map((r) => r.authorization)).toEqual(Array(3).fill(`Bearer ${API_KEY}`));
    expect(fake.received[0]?.body).toMatchObject({
      model: 'fake-model',
      temperature: 0,
      max_tokens: 512,
      stream: false,
    });
    expect(logLines.join('')).not.toContain(API_KEY);
  });

  it('keeps the key out of its own inspection and serialisation', () => {
    const sut = agent();

    expect(inspect(sut, { depth: 10, showHidden: true })).not.toContain(API_KEY);
    expect(JSON.stringify(sut)).not.toContain(API_KEY);
  });

  it('runs 64 episodes at once without queuing on the client side', async () => {
    fake.setLatency(300);
    // No answer before all 64 asked: a client that queued would never get them all there.
    fake.hold();
    const sut = agent();

    const decisions = Promise.all(
      Array.from({ length: 64 }, () => start(sut).nextAction(resultsPage)),
    );
    await fake.until(() => fake.held() === 64);
    fake.release();

    expect((await decisions).every((d) => d.action === 'click[b0test0001]')).toBe(true);
    expect(fake.stats.inFlightMax).toBe(64);
  });

  it('sends no Authorization header without a key', async () => {
    const episode = start(agent({ apiKey: undefined }));

    await episode.nextAction(searchPage);

    expect(fake.stats).toMatchObject({ withAuthorization: 0, withoutAuthorization: 1 });
  });

  it('keeps a bounded trajectory: instruction first, the last steps as chat turns, the current page last', async () => {
    fake.setScript([
      'Action: think[look around]',
      'Action: click[nowhere]',
      'Action: search[deodorant]',
      'Action: click[b0test0002]',
    ]);
    const episode = start(agent({ historySteps: 2, maxObservationChars: 40 }));

    await episode.nextAction(searchPage);
    await episode.nextAction(searchPage);
    await episode.nextAction(searchPage);
    await episode.nextAction(resultsPage);

    const messages = fake.received[3]?.messages ?? [];
    expect(messages.map((m) => m.role)).toEqual([
      'system',
      'user',
      'assistant',
      'user',
      'assistant',
      'user',
    ]);
    expect(messages[1]?.content).toMatch(
      /^Instruction: i would like .*\n\(1 earlier step omitted\)\n\nOK\.\nObservation:\n/,
    );
    expect(messages[1]?.content).toContain(' …(cut)');
    expect(messages[2]?.content).toBe('Action: click[nowhere]');
    expect(messages[3]?.content).toMatch(
      /^Invalid action: "nowhere" is not clickable on this page\. The page has not changed\.\nObservation:/,
    );
    expect(messages[4]?.content).toBe('Action: search[deodorant]');
    expect(messages[5]?.content).toBe(
      `Observation:\n${resultsPage.observation}\n\nAvailable actions:\nclick[back to search]\nclick[next >]\nclick[b0test0001]\nclick[b0test0002]\nthink[<note>]`,
    );
  });

  it('returns garbage replies as invalid decisions with reasons and goes on', async () => {
    fake.setFaults({ garbage: true });
    const episode = start(agent());

    const decisions = [];
    for (let step = 0; step < 7; step += 1) decisions.push(await episode.nextAction(resultsPage));

    expect(decisions.map((d) => [d.valid, d.invalidReason])).toEqual([
      [false, 'no action found in the reply'],
      [false, 'no action found in the reply'],
      [false, '"a product that is not on this page" is not clickable on this page'],
      [false, 'search is not available on this page (no search bar)'],
      [false, 'no action found in the reply'],
      [false, 'unknown action "purchase"; use search[...], click[...] or think[...]'],
      [false, 'empty reply'],
    ]);
    expect(decisions.every((d) => d.kind === 'invalid' && d.tokensIn > 0)).toBe(true);
  });

  it('says when an invalid reply was cut off at the token limit', async () => {
    fake.setScript([
      {
        content: 'Thought: The first product has the right scent but I should also check',
        finishReason: 'length',
      },
    ]);

    const decision = await start(agent()).nextAction(resultsPage);

    expect(decision.invalidReason).toBe(
      'no action found in the reply (the reply was cut off at the token limit)',
    );
  });

  it('accounts tokens from usage and prices them per model', async () => {
    fake.setScript([
      { content: 'Action: click[b0test0001]', promptTokens: 1_200, completionTokens: 30 },
      { content: 'Action: click[buy now]', omitUsage: true },
    ]);
    const sut = agent({
      priceTable: {
        'fake-model': { inputUsdPerMillion: 2.5, outputUsdPerMillion: 10 },
        other: { inputUsdPerMillion: 1, outputUsdPerMillion: 1 },
      },
    });
    const episode = start(sut);

    const priced = await episode.nextAction(resultsPage);
    const unreported = await episode.nextAction(itemPage);
    fake.setScript(['Action: click[b0test0001]']);
    const unpriced = await start(agent()).nextAction(resultsPage);

    expect(priced).toMatchObject({ tokensIn: 1_200, tokensOut: 30, llmRequests: 1 });
    expect(priced.costUsd).toBeCloseTo((1_200 * 2.5 + 30 * 10) / 1e6, 12);
    expect(unreported).toMatchObject({ valid: true, tokensIn: 0, tokensOut: 0, costUsd: 0 });
    expect(unpriced.costUsd).toBeNull();
    expect(unpriced.tokensIn).toBeGreaterThan(0);
  });

  it('waits out a burst of 429s, honouring Retry-After, and succeeds', async () => {
    fake.setFaults({ status429Times: 3, retryAfterSeconds: 2 });

    const decision = await start(agent()).nextAction(searchPage);

    expect(decision).toMatchObject({ valid: true, kind: 'search', llmRequests: 4 });
    expect(delays).toEqual([2_000, 2_000, 2_000]);
    expect(fake.stats).toMatchObject({ status429: 3, completions: 1 });
  });

  it('backs off exponentially with jitter when no Retry-After is given', async () => {
    fake.setFaults({ status500Times: 3 });

    await start(
      agent({ retry: { baseDelayMs: 100, maxDelayMs: 300, random: () => 1 } }),
    ).nextAction(searchPage);

    expect(delays).toEqual([100, 200, 300]);
  });

  it('retries timeouts, dropped connections and unreadable bodies', async () => {
    fake.setFaults({ stallTimes: 1, dropConnectionTimes: 1, malformedTimes: 1 });

    // Long enough for an answer on a machine whose cores are busy: only the stalled request times out.
    const decision = await start(agent({ timeoutMs: 3_000 })).nextAction(searchPage);

    expect(decision).toMatchObject({ valid: true, llmRequests: 4 });
    expect(fake.stats).toMatchObject({ stalled: 1, dropped: 1, malformed: 1, completions: 1 });
    const warnings = logLines.map((line) => JSON.parse(line) as { code?: string; status?: number });
    expect(warnings.map((w) => w.code)).toEqual(['TIMEOUT', 'ECONNRESET', 'MALFORMED_RESPONSE']);
  });

  it('throws LlmUnavailableError when 500s outlast the retries, without leaking the key', async () => {
    fake.setFaults({ status500Times: 100, echoAuthorization: true });

    const error = await start(agent())
      .nextAction(searchPage)
      .catch((e: unknown) => e);

    expect(error).toBeInstanceOf(LlmUnavailableError);
    expect(error).toMatchObject({ name: 'LlmUnavailableError', attempts: 4, status: 500 });
    expect((error as Error).message).toBe(
      `LLM endpoint ${fake.baseUrl} unavailable for model fake-model: HTTP 500 after 4 requests`,
    );
    expect((error as Error).cause).toBeUndefined();
    expect(fake.stats.status500).toBe(4);
    expectNoKey(error);
  });

  // Once: a provider answering 200 with `content: null` turned 123 tasks into agent failures
  // ("step limit of 15 reached"): each null was handed to the agent as an invalid step.
  it('takes an answer with content null for a provider error, retried, never a step', async () => {
    fake.setScript([{ content: null }, { content: null }, 'Action: search[deodorant]']);
    const decision = await start(agent()).nextAction(searchPage);
    expect(decision).toMatchObject({ action: 'search[deodorant]', valid: true, llmRequests: 3 });
    const warnings = logLines.map((line) => JSON.parse(line) as { code?: string });
    expect(warnings.map((w) => w.code)).toEqual(['EMPTY_CONTENT', 'EMPTY_CONTENT']);

    fake.setScript([{ content: null }]);
    const error = await start(agent())
      .nextAction(searchPage)
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(LlmUnavailableError);
    expect((error as Error).message).toBe(
      `LLM endpoint ${fake.baseUrl} unavailable for model fake-model: EMPTY_CONTENT HTTP 200 (the answer's content is null) after 4 requests`,
    );
  });

  // Once: nothing bounded what was read, and 10 MB answers took a worker from 125 to 655 MB.
  it('stops reading an answer past its size limit and fails the call as a provider error naming it', async () => {
    fake.setScript([`Action: search[${'x'.repeat(10 * 1024 * 1024)}]`]);
    // The fake takes a while to make 10 MB on a busy machine: a deadline that only catches a hang.
    const error = await start(agent({ timeoutMs: 120_000, retry: { maxRetries: 1 } }))
      .nextAction(searchPage)
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(LlmUnavailableError);
    expect(error).toMatchObject({ code: 'RESPONSE_TOO_LARGE', attempts: 2 });
    expect((error as Error).message).toBe(
      `LLM endpoint ${fake.baseUrl} unavailable for model fake-model: RESPONSE_TOO_LARGE (the answer is larger than the limit of 1048576 bytes) after 2 requests`,
    );
  });

  it('gives up at once when Retry-After asks for more than it may wait', async () => {
    fake.setFaults({ status429Times: 1, retryAfterSeconds: 3_600 });

    const error = await start(agent())
      .nextAction(searchPage)
      .catch((e: unknown) => e);

    expect(error).toBeInstanceOf(LlmUnavailableError);
    expect(error).toMatchObject({ attempts: 1, status: 429, retryAfterMs: 3_600_000 });
    expect(delays).toEqual([]);
  });

  it('throws LlmUnavailableError when the endpoint cannot be reached, without leaking the key', async () => {
    const closed = await startFakeLlm();
    await closed.close();

    const error = await start(agent({ baseUrl: closed.baseUrl }))
      .nextAction(searchPage)
      .catch((e: unknown) => e);

    expect(error).toMatchObject({ name: 'LlmUnavailableError', attempts: 4, code: 'ECONNREFUSED' });
    expectNoKey(error);
  });

  it('throws LlmRequestError at once on a 4xx, redacting a key the server echoes', async () => {
    fake.setFaults({ status400Times: 1, echoAuthorization: true });

    const error = await start(agent())
      .nextAction(searchPage)
      .catch((e: unknown) => e);

    expect(error).toBeInstanceOf(LlmRequestError);
    expect(error).toMatchObject({ status: 400 });
    expect((error as Error).message).toBe(
      `LLM endpoint ${fake.baseUrl} refused the request for model fake-model: HTTP 400 (Invalid request (received Authorization: Bearer [redacted]))`,
    );
    expect(fake.stats.requests).toBe(1);
    expectNoKey(error);
  });

  it('rejects with the abort reason when the job is aborted during a backoff', async () => {
    fake.setFaults({ status500Times: 100 });
    const controller = new AbortController();
    const sut = agent({
      retry: {
        sleep: async () => {
          controller.abort(new Error('job deadline'));
        },
      },
    });

    await expect(start(sut, controller.signal).nextAction(searchPage)).rejects.toThrow(
      'job deadline',
    );
    expect(fake.stats.requests).toBe(1);
  });

  it('rejects with the abort reason when the job is aborted during a request', async () => {
    fake.setLatency(5_000);
    const controller = new AbortController();
    const pending = start(agent(), controller.signal).nextAction(searchPage);
    setTimeout(() => controller.abort(new Error('job deadline')), 50);

    await expect(pending).rejects.toThrow('job deadline');
    expect(delays).toEqual([]);
  });
});
