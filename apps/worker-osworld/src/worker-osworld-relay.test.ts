import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LlmInputsRepository } from '@benchfleet/db';
import { JobProducer, taskJobId } from '@benchfleet/queue';
import {
  BYTEBOT_PROXY_TOOLS,
  enqueueTestRun,
  FAKE_LLM_PRICE,
  osworldTestTask,
  runCli,
  startCli,
  startFakeBytebot,
  startFakeLlm,
  useTestServices,
  waitFor,
  waitForOutput,
  writeOsworldTestDataset,
  type FakeBytebot,
  type FakeChatRequest,
  type FakeLlm,
  type StartedProcess,
} from '@benchfleet/testing';

// The stack's LLM relay, served by the real worker process: the fake Bytebot agent in proxy mode
// (BYTEBOT_LLM_PROXY_URL at the worker's relay) asks its model through it for every step; the relay
// forwards to a fake provider with prices, through the governor (real Redis), and the worker
// attributes each call to the attempt running on the stack (real Postgres).

const services = useTestServices();
/** A key only this file knows: it must reach the provider and nothing else. */
const API_KEY = `sk-relay-test-${Math.random().toString(36).slice(2)}-secret`;
const MODEL = 'fake-relay-model';
const PROMPT_TOKENS = 1000;
const COMPLETION_TOKENS = 100;
const CALL_USD =
  (PROMPT_TOKENS * FAKE_LLM_PRICE.inputUsdPerMillion +
    COMPLETION_TOKENS * FAKE_LLM_PRICE.outputUsdPerMillion) /
  1_000_000;

let producer: JobProducer;
let scratchDir: string;
let llm: FakeLlm;
let bytebot: FakeBytebot;
let relayPort: number;
let metricsPort: number;
let worker: StartedProcess;

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** Each answer is text the agent turns into its scripted step, numbered by the turns so far. */
function reply(request: FakeChatRequest) {
  const turns = request.messages.filter((message) => message.role === 'assistant').length;
  return {
    content: `Looking at the screen, turn ${turns + 1}.`,
    promptTokens: PROMPT_TOKENS,
    completionTokens: COMPLETION_TOKENS,
  };
}

async function settledTask(runId: string, taskId: string) {
  return waitFor(
    `task ${taskId} to settle`,
    async () => {
      const task = await services.db
        .selectFrom('tasks')
        .selectAll()
        .where('run_id', '=', runId)
        .where('task_id', '=', taskId)
        .executeTakeFirst();
      return task && task.status !== 'queued' && task.status !== 'running' ? task : undefined;
    },
    600_000,
    50,
  );
}

beforeAll(async () => {
  producer = new JobProducer(services.redisUrl, services.prefix);
  scratchDir = await mkdtemp(path.join(tmpdir(), 'worker-osworld-relay-'));
  llm = await startFakeLlm({ models: [MODEL], script: reply });
  relayPort = await freePort();
  metricsPort = await freePort();
  bytebot = await startFakeBytebot({
    pendingDelayMs: 10,
    stepIntervalMs: 10,
    toolDelayMs: 5,
    llmProxyUrl: `http://127.0.0.1:${relayPort}`,
    defaultScenario: { steps: 3, ending: { kind: 'completed', answer: 'Done.' } },
  });
  worker = startCli(
    'worker-osworld',
    ['--bytebot-url', bytebot.url, '--stack-id', 'stack-relay', '--grace-s', '5'],
    {
      ...services.env,
      BENCHFLEET_ARTIFACTS: path.join(scratchDir, 'artifacts'),
      LOG_LEVEL: 'debug',
      LLM_BASE_URL: llm.baseUrl,
      LLM_API_KEY: API_KEY,
      BENCHFLEET_LLM_RELAY_MODELS: MODEL,
      BENCHFLEET_LLM_RELAY_PORT: String(relayPort),
      BENCHFLEET_METRICS_PORT: String(metricsPort),
      LLM_PRICE_TABLE: JSON.stringify({ [MODEL]: FAKE_LLM_PRICE }),
    },
  );
  await waitForOutput(worker, 'worker ready', 'the worker to be ready');
});

afterAll(async () => {
  if (worker.child.exitCode === null && worker.child.signalCode === null) {
    worker.child.kill('SIGTERM');
    await worker.exited;
  }
  await bytebot.close();
  await llm.close();
  await producer.close();
  await rm(scratchDir, { recursive: true, force: true });
});

describe("worker-osworld's LLM relay for its stack's agent", () => {
  it('every call of a task goes through the relay and is attributed: tokens and cost per step and per task', async () => {
    const dataset = await writeOsworldTestDataset(scratchDir, 'relay', [
      osworldTestTask('os-relayed', 'Open the terminal'),
    ]);
    const runId = await enqueueTestRun(
      { db: services.db, producer },
      { benchmark: 'osworld', flags: { dataset } },
    );
    const task = await settledTask(runId, 'os-relayed');
    // Three computer steps and the closing one: four calls, four ASSISTANT messages.
    expect(task).toMatchObject({ status: 'success', total_steps: 4, attempts: 1 });
    expect(bytebot.llmCalls().map((call) => call.status)).toEqual([200, 200, 200, 200]);
    expect(llm.stats.completions).toBe(4);
    // The agent chose its model from the relay's list.
    expect(task.result).toMatchObject({ model: { provider: 'proxy', name: MODEL } });

    const steps = await services.db
      .selectFrom('steps')
      .selectAll()
      .where('run_id', '=', runId)
      .orderBy('step')
      .execute();
    expect(steps.map((step) => [step.step, step.tokens_in, step.tokens_out])).toEqual([
      [1, PROMPT_TOKENS, COMPLETION_TOKENS],
      [2, PROMPT_TOKENS, COMPLETION_TOKENS],
      [3, PROMPT_TOKENS, COMPLETION_TOKENS],
      [4, PROMPT_TOKENS, COMPLETION_TOKENS],
    ]);
    for (const step of steps) {
      expect(step.cost_usd).toBeCloseTo(CALL_USD, 12);
      expect(step.latency_ms).not.toBeNull();
    }
    expect(task).toMatchObject({ tokens_in: 4 * PROMPT_TOKENS, tokens_out: 4 * COMPLETION_TOKENS });
    expect(task.cost_usd).toBeCloseTo(4 * CALL_USD, 12);
    // What the provider billed is what the task records.
    expect(task.cost_usd).toBeCloseTo(llm.billed().usd, 12);

    // The provider got the worker's key; the agent sent only its dummy one.
    expect(llm.received.map((request) => request.authorization)).toEqual(
      Array(4).fill(`Bearer ${API_KEY}`),
    );
    expect(bytebot.llmCalls().every((call) => !call.authorization.includes(API_KEY))).toBe(true);
  });

  it("stores each relayed call's input with its step, as the provider received it, each message and screenshot once", async () => {
    const before = llm.received.length;
    const dataset = await writeOsworldTestDataset(scratchDir, 'inputs', [
      osworldTestTask('os-inputs', 'Open the file manager'),
    ]);
    const runId = await enqueueTestRun(
      { db: services.db, producer },
      { benchmark: 'osworld', flags: { dataset } },
    );
    expect(await settledTask(runId, 'os-inputs')).toMatchObject({
      status: 'success',
      total_steps: 4,
    });
    const sent = llm.received.slice(before);
    expect(sent).toHaveLength(4);
    const repository = new LlmInputsRepository(services.db);
    // Written beside the episode: they may land just after the task settles.
    const calls = await waitFor(
      'the four calls inputs',
      async () => {
        const rows = await repository.callsOfTask(runId, 'os-inputs');
        return rows.length === 4 ? rows : undefined;
      },
      600_000,
      50,
    );
    expect(calls.map((call) => [call.attempt, call.call_no, call.step, call.model])).toEqual([
      [1, 1, 1, MODEL],
      [1, 2, 2, MODEL],
      [1, 3, 3, MODEL],
      [1, 4, 4, MODEL],
    ]);
    for (const [index, call] of calls.entries()) {
      const input = await repository.inputOf(call);
      expect(input.messages).toEqual(sent[index]!.body['messages']);
      expect(input.tools).toEqual(sent[index]!.body['tools']);
      expect(call.tokens_in).toBe(PROMPT_TOKENS);
    }
    // Each call resends the history: stored once, the blobs are the distinct messages and images.
    const sentMessages = sent.reduce((sum, request) => sum + request.messages.length, 0);
    const distinct = new Set(calls.flatMap((call) => call.message_digests));
    const size = await repository.storedSize(runId);
    const images = await services.db
      .selectFrom('llm_input_blobs')
      .select((eb) => eb.fn.countAll<string>().as('n'))
      .where('run_id', '=', runId)
      .where('kind', '=', 'image')
      .executeTakeFirstOrThrow();
    expect(distinct.size).toBeLessThan(sentMessages);
    expect(size.blobs).toBe(distinct.size + Number(images.n) + 1);
    expect(Number(images.n)).toBeGreaterThan(0);
    const sentBytes = sent.reduce((sum, request) => sum + JSON.stringify(request.body).length, 0);
    expect(size.bytes).toBeLessThan(sentBytes / 2);
    // The key the provider got is nowhere in what was stored.
    const stored = await sql<{ text: string }>`
      select string_agg(coalesce(body::text, '') || coalesce(encode(data, 'escape'), ''), '') as text
      from llm_input_blobs where run_id = ${runId}`.execute(services.db);
    expect(stored.rows[0]!.text).not.toContain(API_KEY);
  });

  it('a run enqueued with no price for its model, whose worker priced every relayed call: status gives the spend aggregate gives, not "unpriced"', async () => {
    const dataset = await writeOsworldTestDataset(scratchDir, 'priced-by-worker', [
      osworldTestTask('os-priced-by-worker', 'Open the terminal'),
    ]);
    const model = JSON.stringify({ provider: 'proxy', name: MODEL, title: 'Fake relay model' });
    // The enqueue has no price table: it records that it found no price for the model.
    const runId = await enqueueTestRun(
      { db: services.db, producer },
      { benchmark: 'osworld', flags: { dataset, model } },
    );
    const run = await services.db
      .selectFrom('runs')
      .select('limits')
      .where('id', '=', runId)
      .executeTakeFirstOrThrow();
    expect(run.limits).toEqual({ model_price: null });
    const task = await settledTask(runId, 'os-priced-by-worker');
    expect(task).toMatchObject({ status: 'success', tokens_in: 4 * PROMPT_TOKENS });
    expect(task.cost_usd).toBeCloseTo(4 * CALL_USD, 12);

    const aggregate = await runCli('scheduler', ['aggregate', runId], services.env);
    expect(aggregate.code).toBe(0);
    const summary = JSON.parse(aggregate.stdout) as { cost_usd: number | null; unpriced: boolean };
    expect(summary.unpriced).toBe(false);
    expect(summary.cost_usd).toBeCloseTo(4 * CALL_USD, 6);

    const status = await runCli('scheduler', ['status', runId, '--json'], services.env);
    expect(status.code).toBe(0);
    const spend = (JSON.parse(status.stdout) as { spend: Record<string, unknown> }).spend;
    expect(spend).toMatchObject({ unpriced: false, unpricedCalls: 0, llmSteps: 4 });
    expect(spend['spentUsd']).toBeCloseTo(4 * CALL_USD, 9);
    const text = await runCli('scheduler', ['status', runId], services.env);
    expect(text.stdout).not.toContain('unpriced');
    expect(text.stdout).toMatch(/^ {2}spend: \$0\.\d+ \(priced from 4 steps\)/m);
  });

  it("prices a run's relayed calls by the price table given at enqueue, before the worker's own", async () => {
    const dataset = await writeOsworldTestDataset(scratchDir, 'priced-by-run', [
      osworldTestTask('os-priced-by-run', 'Open the terminal'),
    ]);
    const model = JSON.stringify({ provider: 'proxy', name: MODEL, title: 'Fake relay model' });
    // Twice the worker's price: what the task records tells which table priced it.
    const runPrice = {
      inputUsdPerMillion: 2 * FAKE_LLM_PRICE.inputUsdPerMillion,
      outputUsdPerMillion: 2 * FAKE_LLM_PRICE.outputUsdPerMillion,
    };
    const runId = await enqueueTestRun(
      { db: services.db, producer },
      {
        benchmark: 'osworld',
        flags: { dataset, model },
        limits: { priceTable: JSON.stringify({ [MODEL]: runPrice }), maxCostUsd: '5' },
      },
    );
    const run = await services.db
      .selectFrom('runs')
      .select(['limits', 'price_table'])
      .where('id', '=', runId)
      .executeTakeFirstOrThrow();
    expect(run).toEqual({
      limits: { max_cost_usd: 5, model_price: runPrice },
      price_table: { [MODEL]: runPrice },
    });
    const task = await settledTask(runId, 'os-priced-by-run');
    expect(task).toMatchObject({ status: 'success', tokens_in: 4 * PROMPT_TOKENS });
    expect(task.cost_usd).toBeCloseTo(8 * CALL_USD, 12);
    const steps = await services.db
      .selectFrom('steps')
      .select('cost_usd')
      .where('run_id', '=', runId)
      .execute();
    expect(steps.map((step) => step.cost_usd)).toEqual(
      Array(4).fill(expect.closeTo(2 * CALL_USD, 12)),
    );
  });

  it("a provider that does not answer is the provider's fault: the agent's failure is an infra error, retried, not scored", async () => {
    // Every request fails, and the provider quotes the key in its error bodies.
    llm.setFaults({ status500Times: 1_000, echoAuthorization: true });
    try {
      const dataset = await writeOsworldTestDataset(scratchDir, 'provider-down', [
        osworldTestTask('os-provider-down', 'Open the terminal'),
      ]);
      const runId = await enqueueTestRun(
        { db: services.db, producer },
        { benchmark: 'osworld', flags: { dataset } },
      );
      const [attempt] = await waitFor(
        'the attempt to fail',
        async () => {
          const attempts = await services.db
            .selectFrom('attempts')
            .selectAll()
            .where('run_id', '=', runId)
            .execute();
          return attempts[0]?.status === 'error' ? attempts : undefined;
        },
        120_000,
        100,
      );
      expect(attempt).toMatchObject({ error_class: 'infra' });
      expect(attempt!.error).toMatch(/^the LLM provider did not answer the agent's call/);
      expect(attempt!.error).toContain('the agent ended FAILED');
      // The relay retried the provider before giving the agent its answer.
      expect(llm.stats.status500).toBeGreaterThan(1);
      const task = await services.db
        .selectFrom('tasks')
        .selectAll()
        .where('run_id', '=', runId)
        .executeTakeFirstOrThrow();
      expect(task).toMatchObject({ status: 'running', success: null });
      // Its retry must not run while the next test wants the stack idle.
      const job = await producer.queue('osworld').getJob(taskJobId(runId, 'os-provider-down'));
      await waitFor(
        'the retry to be scheduled',
        async () => (await job!.getState()) === 'delayed',
        600_000,
        50,
      );
      await job!.remove();
    } finally {
      llm.setFaults({});
    }
  });

  it('a task over its spend limit stops with `budget`: the call is refused before the provider sees it, and the agent’s failure is not its own', async () => {
    const sent = llm.stats.requests;
    const dataset = await writeOsworldTestDataset(scratchDir, 'budget', [
      osworldTestTask('os-budget', 'Open the terminal'),
    ]);
    // Less than one call's estimate (its prompt and Bytebot's max_tokens at the model's price).
    const runId = await enqueueTestRun(
      { db: services.db, producer },
      {
        benchmark: 'osworld',
        flags: { dataset },
        limits: {
          maxTaskCostUsd: '0.001',
          priceTable: JSON.stringify({ [MODEL]: FAKE_LLM_PRICE }),
        },
      },
    );
    const task = await settledTask(runId, 'os-budget');
    expect(task).toMatchObject({
      status: 'error',
      error_class: 'budget',
      final_api_status: 'BUDGET',
      attempts: 1,
    });
    expect(task.result).toMatchObject({ stop_reason: 'budget', budget_scope: 'task' });
    expect(task.error).toMatch(/^budget: /);
    // The agent was answered with the budget error; the provider saw nothing.
    expect(bytebot.llmCalls().at(-1)).toMatchObject({ status: 400 });
    expect(llm.stats.requests).toBe(sent);
  });

  it("a call while no attempt runs on the stack (an orphan's, a cancelled task's) is refused at once, never sent, and counted", async () => {
    const sent = llm.stats.requests;
    const answer = await fetch(`http://127.0.0.1:${relayPort}/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: 'Bearer dummy-key-for-proxy' },
      body: JSON.stringify({
        model: MODEL,
        messages: [{ role: 'user', content: 'Open the terminal' }],
        tools: BYTEBOT_PROXY_TOOLS,
      }),
    });
    expect(answer.status).toBe(403);
    // The agent's OpenAI client must not retry it.
    expect(answer.headers.get('x-should-retry')).toBe('false');
    expect(((await answer.json()) as { error: { code: string } }).error.code).toBe(
      'no_running_attempt',
    );
    expect(llm.stats.requests).toBe(sent);
    await waitForOutput(
      worker,
      /"refusedWithoutAttempt":1.*no attempt runs on this stack/,
      'the refusal to be counted',
    );
    // and counted where a fleet's monitoring looks.
    const metrics = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
    expect(metrics).toMatch(/^benchfleet_llm_relay_refused_without_attempt\{[^}]*\} 1$/m);
  });

  it('the key is in no log line, job and row', async () => {
    expect(worker.output()).not.toContain(API_KEY);
    const tables = ['runs', 'tasks', 'attempts', 'steps'];
    for (const table of tables) {
      const { rows } = await sql<{
        row: string;
      }>`select t::text as row from ${sql.table(table)} t`.execute(services.db);
      expect(rows.length, table).toBeGreaterThan(0);
      for (const { row } of rows) expect(row, table).not.toContain(API_KEY);
    }
    const jobs = await producer
      .queue('osworld')
      .getJobs(['completed', 'failed', 'waiting', 'delayed']);
    expect(jobs.length).toBeGreaterThan(0);
    for (const job of jobs) expect(JSON.stringify(job)).not.toContain(API_KEY);
  });
});

describe("a killed worker's orphaned agent task", () => {
  it('gets no call to the provider after the kill: the next worker attributes every call it forwards to its own attempt', async () => {
    // This test's workers alone serve the queue.
    if (worker.child.exitCode === null && worker.child.signalCode === null) {
      worker.child.kill('SIGTERM');
      await worker.exited;
    }
    const port = await freePort();
    let creates = 0;
    // The first run of the task never ends (the agent keeps asking its model); the second completes.
    const fake = await startFakeBytebot({
      pendingDelayMs: 10,
      stepIntervalMs: 20,
      toolDelayMs: 5,
      llmProxyUrl: `http://127.0.0.1:${port}`,
      chooseScenario: () =>
        creates++ === 0
          ? { steps: Infinity, ending: { kind: 'silent' } }
          : { steps: 3, ending: { kind: 'completed', answer: 'Done.' } },
    });
    const start = (stackId: string) =>
      startCli('worker-osworld', ['--bytebot-url', fake.url, '--stack-id', stackId], {
        ...services.env,
        BENCHFLEET_ARTIFACTS: path.join(scratchDir, 'artifacts'),
        BENCHFLEET_LOCK_MS: '1000',
        LOG_LEVEL: 'info',
        LLM_BASE_URL: llm.baseUrl,
        LLM_API_KEY: API_KEY,
        BENCHFLEET_LLM_RELAY_MODELS: MODEL,
        BENCHFLEET_LLM_RELAY_PORT: String(port),
        LLM_PRICE_TABLE: JSON.stringify({ [MODEL]: FAKE_LLM_PRICE }),
      });
    const sentBefore = llm.stats.requests;
    const doomed = start('stack-doomed');
    let rescuer: StartedProcess | undefined;
    try {
      await waitForOutput(doomed, 'worker ready', 'the first worker to be ready');
      const dataset = await writeOsworldTestDataset(scratchDir, 'orphan', [
        osworldTestTask('os-orphan', 'Rename the file'),
      ]);
      const runId = await enqueueTestRun(
        { db: services.db, producer },
        { benchmark: 'osworld', flags: { dataset } },
      );
      await waitFor(
        'two steps of the first attempt',
        async () =>
          (
            await services.db
              .selectFrom('steps')
              .select('step')
              .where('run_id', '=', runId)
              .where('attempt', '=', 1)
              .execute()
          ).length >= 2,
        600_000,
        50,
      );
      doomed.child.kill('SIGKILL');
      await doomed.exited;
      const orphan = fake.tasks()[0]!;
      expect(orphan.status).toBe('RUNNING');
      const sentAtKill = llm.stats.requests;
      const orphanAnsweredAtKill = fake
        .llmCalls(orphan.id)
        .filter((call) => call.status === 200).length;

      rescuer = start('stack-rescuer');
      const task = await settledTask(runId, 'os-orphan');
      expect(task).toMatchObject({ status: 'success', attempts: 2, worker_id: 'stack-rescuer' });
      // The orphan ended (cancelled by the rescuer, or failed by a refused call) …
      expect(['CANCELLED', 'FAILED']).toContain(
        fake.tasks().find((row) => row.id === orphan.id)?.status,
      );
      // … and none of its calls after the kill reached the provider: every call the provider got
      // since is one of the second attempt's four, each on its step.
      expect(fake.llmCalls(orphan.id).filter((call) => call.status === 200)).toHaveLength(
        orphanAnsweredAtKill,
      );
      expect(llm.stats.requests - sentAtKill).toBe(4);
      // Every attempt's spend counts: the killed one's calls, each written before the agent had its
      // answer, are on its attempt row though its worker never settled it; the task has the sum.
      expect(orphanAnsweredAtKill).toBeGreaterThanOrEqual(2);
      const attempts = await services.db
        .selectFrom('attempts')
        .select(['attempt', 'status', 'tokens_in', 'tokens_out', 'cost_usd'])
        .where('run_id', '=', runId)
        .orderBy('attempt')
        .execute();
      // The killed attempt's calls: those the provider answered to the relay before the kill. A
      // call answered in the instant of the kill is on the row (written before the agent gets its
      // answer) though the agent never saw it: at least what the agent saw, at most what was sent.
      const firstCalls = attempts[0]!.tokens_in / PROMPT_TOKENS;
      expect(firstCalls).toBeGreaterThanOrEqual(orphanAnsweredAtKill);
      expect(firstCalls).toBeLessThanOrEqual(sentAtKill - sentBefore);
      expect(attempts.map(({ cost_usd: _, ...rest }) => rest)).toEqual([
        {
          attempt: 1,
          status: 'error',
          tokens_in: firstCalls * PROMPT_TOKENS,
          tokens_out: firstCalls * COMPLETION_TOKENS,
        },
        {
          attempt: 2,
          status: 'success',
          tokens_in: 4 * PROMPT_TOKENS,
          tokens_out: 4 * COMPLETION_TOKENS,
        },
      ]);
      expect(attempts[0]!.cost_usd).toBeCloseTo(firstCalls * CALL_USD, 12);
      expect(attempts[1]!.cost_usd).toBeCloseTo(4 * CALL_USD, 12);
      const calls = firstCalls + 4;
      expect(task).toMatchObject({
        tokens_in: calls * PROMPT_TOKENS,
        tokens_out: calls * COMPLETION_TOKENS,
      });
      expect(task.cost_usd).toBeCloseTo(calls * CALL_USD, 12);
      const aggregate = await runCli('scheduler', ['aggregate', runId], services.env);
      expect((JSON.parse(aggregate.stdout) as { cost_usd: number }).cost_usd).toBeCloseTo(
        calls * CALL_USD,
        6,
      );
    } finally {
      for (const worker of [doomed, rescuer])
        if (worker && worker.child.exitCode === null && worker.child.signalCode === null) {
          worker.child.kill('SIGTERM');
          await worker.exited;
        }
      await fake.close();
    }
  });
});
