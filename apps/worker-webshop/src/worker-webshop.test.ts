import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { RuleAgent } from '@benchfleet/webshop-agents';
import { LlmInputsRepository } from '@benchfleet/db';
import { JobProducer } from '@benchfleet/queue';
import {
  enqueueTestRun,
  killLeftoverProcesses,
  startCli,
  startFakeLlm,
  useTestServices,
  waitFor,
  waitForWorkerReady,
  type FakeLlm,
  type StartedProcess,
} from '@benchfleet/testing';
import { runWebshopEpisode } from '@benchfleet/webshop';
import {
  demoCatalogRequest,
  importWebshopCatalog,
  loadStoreFromDatabase,
} from '@benchfleet/webshop-benchmark';

const services = useTestServices();
let producer: JobProducer;
const workers: StartedProcess[] = [];

function startWorker(
  id: string,
  extra: Record<string, string> = {},
  args: string[] = [],
): StartedProcess {
  const worker = startCli('worker-webshop', ['--worker-id', id, '--concurrency', '8', ...args], {
    ...services.env,
    LOG_LEVEL: 'info',
    ...extra,
  });
  workers.push(worker);
  return worker;
}

async function stopWorker(worker: StartedProcess): Promise<number | null> {
  worker.child.kill('SIGTERM');
  return (await worker.exited).code;
}

async function enqueue(
  flags: Record<string, string>,
  limits: { maxTasks?: number; maxSteps?: number } = {},
): Promise<string> {
  return enqueueTestRun({ db: services.db, producer }, { benchmark: 'webshop', ...limits, flags });
}

async function settledTasks(runId: string) {
  return waitFor(
    `run ${runId} to settle`,
    async () => {
      const tasks = await services.db
        .selectFrom('tasks')
        .selectAll()
        .where('run_id', '=', runId)
        .orderBy('seq')
        .execute();
      return tasks.every((task) => task.status !== 'queued' && task.status !== 'running')
        ? tasks
        : undefined;
    },
    600_000,
    200,
  );
}

/** Per task, each step's action and the observation it led to, as the worker recorded them. */
async function recordedSteps(runId: string) {
  const rows = await services.db
    .selectFrom('steps')
    .select(['task_id', 'attempt', 'step', 'action', 'observation'])
    .where('run_id', '=', runId)
    .orderBy('task_id')
    .orderBy('step')
    .execute();
  const byTask = new Map<string, Array<{ action: string; observation: string | null }>>();
  for (const row of rows) {
    const step = {
      action: String((row.action as { action: string }).action),
      observation: row.observation,
    };
    byTask.set(row.task_id, [...(byTask.get(row.task_id) ?? []), step]);
  }
  return byTask;
}

beforeAll(async () => {
  producer = new JobProducer(services.redisUrl, services.prefix);
  await importWebshopCatalog(services.db, demoCatalogRequest({ seed: 0, products: 400 }));
});

// A test that failed half-way must not leave workers that take the next test's jobs.
afterEach(async () => {
  await killLeftoverProcesses(workers);
});

afterAll(async () => {
  await producer.close();
});

describe('worker-webshop', () => {
  it('plays 50 rule episodes on two worker processes (search snapshot, products from Postgres) with the same actions, observations and rewards as an in-process run on the in-memory store', async () => {
    // Both wait for jobs before there are any, so both take a share of them.
    const fleet = [startWorker('webshop-a'), startWorker('webshop-b')];
    await Promise.all(fleet.map((worker) => waitForWorkerReady(worker)));
    const runId = await enqueue({ split: 'test', agent: 'rule' }, { maxTasks: 50 });
    const tasks = await settledTasks(runId);
    expect(tasks).toHaveLength(50);
    expect(
      tasks.every(
        (task) => task.reward !== null && (task.status === 'success' || task.status === 'failed'),
      ),
    ).toBe(true);
    expect(new Set(tasks.map((task) => task.worker_id))).toEqual(
      new Set(['webshop-a', 'webshop-b']),
    );

    // The same agent on the same goals, in this process, without queue or Postgres in between.
    const { store } = await loadStoreFromDatabase(services.db, 'demo');
    const recorded = await recordedSteps(runId);
    let inProcessRewardSum = 0;
    for (const task of tasks) {
      const goalIndex = Number((task.spec as { goal_index: number }).goal_index);
      const steps: Array<{ action: string; observation: string }> = [];
      const result = await runWebshopEpisode({
        store,
        agent: new RuleAgent(),
        goalIndex,
        maxSteps: 15,
        signal: new AbortController().signal,
        onStep: (step) => steps.push({ action: step.action.action, observation: step.observation }),
      });
      inProcessRewardSum += result.reward;
      expect(recorded.get(task.task_id)).toEqual(steps);
      expect(task.total_steps).toBe(steps.length);
      expect(task.reward).toBe(result.reward);
    }
    const fleetMean = tasks.reduce((sum, task) => sum + (task.reward ?? 0), 0) / tasks.length;
    expect(fleetMean).toBeCloseTo(inProcessRewardSum / tasks.length, 12);
    expect(fleetMean).toBeGreaterThan(0);
    for (const worker of fleet) expect(await stopWorker(worker)).toBe(0);
  });

  describe('with the LLM agent against a fake OpenAI-compatible server', () => {
    let llm: FakeLlm;
    beforeAll(async () => {
      llm = await startFakeLlm({ latencyMs: 5 });
    });
    afterAll(async () => {
      await llm.close();
    });

    it('waits out a burst of 429s without using up an attempt, and records tokens; the key never reaches logs', async () => {
      llm.setFaults({ status429Times: 12, retryAfterSeconds: 0 });
      const runId = await enqueue(
        { split: 'test', agent: 'llm', llmBaseUrl: llm.baseUrl, llmModel: 'fake-model' },
        { maxTasks: 10 },
      );
      const worker = startWorker('webshop-llm', { LLM_API_KEY: 'sk-test-secret-key-123456' });
      const tasks = await settledTasks(runId);
      expect(tasks.every((task) => task.attempts === 1 && task.status !== 'error')).toBe(true);
      expect(tasks.every((task) => task.tokens_in > 0 && task.tokens_out > 0)).toBe(true);
      expect(tasks.every((task) => task.final_api_status === 'BOUGHT')).toBe(true);
      expect(llm.stats.status429).toBe(12);
      expect(llm.stats.withAuthorization).toBeGreaterThan(0);
      expect(await stopWorker(worker)).toBe(0);
      expect(worker.output()).not.toContain('sk-test-secret-key-123456');
      const stepTokens = await services.db
        .selectFrom('steps')
        .select((eb) => eb.fn.sum<number>('tokens_in').as('n'))
        .where('run_id', '=', runId)
        .executeTakeFirstOrThrow();
      expect(Number(stepTokens.n)).toBe(tasks.reduce((sum, task) => sum + task.tokens_in, 0));
    });

    it("stores each step's LLM input as the provider received it, and none with --store-model-inputs false", async () => {
      llm.setFaults({});
      const before = llm.received.length;
      const runId = await enqueue(
        { split: 'test', agent: 'llm', llmBaseUrl: llm.baseUrl, llmModel: 'fake-model' },
        { maxTasks: 1 },
      );
      const worker = startWorker('webshop-inputs');
      const [task] = await settledTasks(runId);
      expect(await stopWorker(worker)).toBe(0);
      const sent = llm.received.slice(before);
      expect(sent).toHaveLength(task!.total_steps!);
      const repository = new LlmInputsRepository(services.db);
      const calls = await repository.callsOfTask(runId, task!.task_id);
      expect(calls.map((call) => [call.call_no, call.step])).toEqual(
        sent.map((_, index) => [index + 1, index + 1]),
      );
      for (const [index, call] of calls.entries()) {
        expect((await repository.inputOf(call)).messages).toEqual(sent[index]!.body['messages']);
        expect(call.parameters).toEqual({
          temperature: sent[index]!.body['temperature'],
          max_tokens: sent[index]!.body['max_tokens'],
        });
      }
      // The system prompt and the history are resent each step, and stored once.
      const sentMessages = sent.reduce((sum, request) => sum + request.messages.length, 0);
      expect((await repository.storedSize(runId)).blobs).toBeLessThan(sentMessages);

      const offRun = await enqueue(
        { split: 'test', agent: 'llm', llmBaseUrl: llm.baseUrl, llmModel: 'fake-model' },
        { maxTasks: 1 },
      );
      const off = startWorker('webshop-no-inputs', {}, ['--store-model-inputs', 'false']);
      const [offTask] = await settledTasks(offRun);
      expect(await stopWorker(off)).toBe(0);
      expect(offTask!.total_steps).toBeGreaterThan(0);
      expect(await repository.storedSize(offRun)).toEqual({ calls: 0, blobs: 0, bytes: 0 });
    });

    it('holds two worker processes to one fleet-wide LLM concurrency cap (--llm-max-concurrency)', async () => {
      llm.setFaults({});
      llm.setLatency(50);
      const runId = await enqueue(
        { split: 'test', agent: 'llm', llmBaseUrl: llm.baseUrl, llmModel: 'fake-model' },
        { maxTasks: 12 },
      );
      const maxBefore = llm.stats.inFlightMax;
      llm.stats.inFlightMax = 0;
      // Each could have 8 calls in flight on its own: together they may have 2.
      const fleet = ['webshop-cap-a', 'webshop-cap-b'].map((id) =>
        startWorker(id, { LLM_API_KEY: 'sk-test-secret-key-123456' }, [
          '--llm-max-concurrency',
          '2',
        ]),
      );
      const tasks = await settledTasks(runId);
      // Every task bought. (On a machine loaded past its cores a governor round trip to Redis can
      // miss its 2 s deadline: that attempt is an infra fault and the task runs again, which is
      // not what this test is about; the cap is.)
      expect(
        tasks.filter((task) => task.final_api_status !== 'BOUGHT'),
        JSON.stringify(tasks.map((task) => [task.task_id, task.final_api_status, task.attempts])),
      ).toEqual([]);
      expect(new Set(tasks.map((task) => task.worker_id)).size).toBe(2);
      expect(llm.stats.inFlightMax).toBe(2);
      for (const worker of fleet) expect(await stopWorker(worker)).toBe(0);
      llm.stats.inFlightMax = Math.max(maxBefore, llm.stats.inFlightMax);
      llm.setLatency(5);
    });

    it('records garbage replies as invalid steps and goes on to the step limit', async () => {
      llm.setFaults({ garbage: true });
      const runId = await enqueue(
        { split: 'test', agent: 'llm', llmBaseUrl: llm.baseUrl, llmModel: 'fake-model' },
        { maxTasks: 3, maxSteps: 4 },
      );
      const worker = startWorker('webshop-garbage');
      const tasks = await settledTasks(runId);
      for (const task of tasks) {
        expect(task).toMatchObject({
          status: 'failed',
          final_api_status: 'STEP_LIMIT',
          total_steps: 4,
          reward: 0,
        });
        expect(task.error).toMatch(/step limit of 4/);
      }
      const steps = await services.db
        .selectFrom('steps')
        .select(['action'])
        .where('run_id', '=', runId)
        .execute();
      expect(steps).toHaveLength(12);
      expect(steps.every((step) => (step.action as { valid: boolean }).valid === false)).toBe(true);
      expect(
        steps.every(
          (step) => typeof (step.action as { invalid_reason?: string }).invalid_reason === 'string',
        ),
      ).toBe(true);
      llm.setFaults({});
      expect(await stopWorker(worker)).toBe(0);
    });

    it('loses nothing when a worker is SIGKILLed mid-episode: the episode runs again, one outcome', async () => {
      llm.setFaults({});
      llm.setLatency(400);
      const runId = await enqueue({
        agent: 'llm',
        llmBaseUrl: llm.baseUrl,
        llmModel: 'fake-model',
        goals: '3',
      });
      const first = startWorker('webshop-doomed', { BENCHFLEET_LOCK_MS: '1000' });
      await waitFor('a first step of the episode', async () => {
        const row = await services.db
          .selectFrom('steps')
          .select('step')
          .where('run_id', '=', runId)
          .executeTakeFirst();
        return row !== undefined;
      });
      first.child.kill('SIGKILL');
      await first.exited;
      llm.setLatency(5);
      const second = startWorker('webshop-rescuer', { BENCHFLEET_LOCK_MS: '1000' });
      const [task] = await settledTasks(runId);
      expect(task).toMatchObject({
        status: expect.stringMatching(/success|failed/),
        attempts: 2,
        worker_id: 'webshop-rescuer',
        final_api_status: 'BOUGHT',
      });
      const attempts = await services.db
        .selectFrom('attempts')
        .selectAll()
        .where('run_id', '=', runId)
        .orderBy('attempt')
        .execute();
      expect(attempts.map((a) => [a.worker_id, a.status, a.error_class])).toEqual([
        ['webshop-doomed', 'error', 'infra'],
        ['webshop-rescuer', task!.status, null],
      ]);
      const steps = await services.db
        .selectFrom('steps')
        .select(['attempt'])
        .where('run_id', '=', runId)
        .where('attempt', '=', 2)
        .execute();
      expect(steps).toHaveLength(task!.total_steps);
      expect(await stopWorker(second)).toBe(0);
    });
  });
});
