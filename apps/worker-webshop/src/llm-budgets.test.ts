import { sql } from 'kysely';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { LlmGovernor } from '@benchfleet/llm-governor';
import { JobProducer } from '@benchfleet/queue';
import {
  enqueueTestRun,
  killLeftoverProcesses,
  runCli,
  startCli,
  startFakeLlm,
  useTestServices,
  waitFor,
  waitForWorkerReady,
  type FakeLlm,
  type StartedProcess,
} from '@benchfleet/testing';
import { demoCatalogRequest, importWebshopCatalog } from '@benchfleet/webshop-benchmark';

// Spend limits and the infra-error pause, on worker-webshop processes and a fake provider with
// prices: a task stopped by its limit, a run stopped by its limit on two workers (overshoot within
// one call per task in flight), an unpriced model at enqueue, and a run paused by a burst of
// provider faults then taken up again by `scheduler resume`.

const services = useTestServices();
let producer: JobProducer;
let governor: LlmGovernor;
const workers: StartedProcess[] = [];
const KEY = 'sk-budget-test-key-0123456789';
const PRICED = 'fake-model';

function priceTable(llm: FakeLlm): string {
  return JSON.stringify({ [PRICED]: llm.price });
}

/** A worker with the fake's prices of its own, or (`ownPrices: false`) none: only the run's. */
function startWorker(
  id: string,
  llm: FakeLlm,
  concurrency: number,
  { ownPrices = true } = {},
): StartedProcess {
  const worker = startCli(
    'worker-webshop',
    ['--worker-id', id, '--concurrency', String(concurrency)],
    {
      ...services.env,
      LOG_LEVEL: 'info',
      LLM_API_KEY: KEY,
      ...(ownPrices && { LLM_PRICE_TABLE: priceTable(llm) }),
    },
  );
  workers.push(worker);
  return worker;
}

async function stopWorker(worker: StartedProcess): Promise<number | null> {
  worker.child.kill('SIGTERM');
  return (await worker.exited).code;
}

async function tasksOf(runId: string) {
  return services.db
    .selectFrom('tasks')
    .selectAll()
    .where('run_id', '=', runId)
    .orderBy('seq')
    .execute();
}

async function settled(runId: string) {
  return waitFor(
    `run ${runId} to settle`,
    async () => {
      const tasks = await tasksOf(runId);
      return tasks.every((task) => task.status !== 'queued' && task.status !== 'running')
        ? tasks
        : undefined;
    },
    600_000,
    200,
  );
}

/** What the run's steps were priced at in Postgres: the figure `status` gives. */
async function stepSpend(runId: string): Promise<{ usd: number; llmSteps: number }> {
  const row = await services.db
    .selectFrom('steps')
    .select((eb) => [
      eb.fn.coalesce(eb.fn.sum<number>('cost_usd'), sql<number>`0`).as('usd'),
      eb.fn.countAll<string>().as('steps'),
    ])
    .where('run_id', '=', runId)
    .where(sql<boolean>`tokens_in + tokens_out > 0`)
    .executeTakeFirstOrThrow();
  return { usd: Number(row.usd), llmSteps: Number(row.steps) };
}

/** What one answered call cost at the fake's price, per call, in arrival order. */
function callCosts(llm: FakeLlm): number[] {
  return llm.arrivals.flatMap((arrival) =>
    arrival.billed
      ? [
          (arrival.billed.promptTokens * llm.price.inputUsdPerMillion +
            arrival.billed.completionTokens * llm.price.outputUsdPerMillion) /
            1_000_000,
        ]
      : [],
  );
}

beforeAll(async () => {
  producer = new JobProducer(services.redisUrl, services.prefix);
  governor = new LlmGovernor({ redisUrl: services.redisUrl, prefix: services.prefix });
  await importWebshopCatalog(services.db, demoCatalogRequest({ seed: 0, products: 400 }));
});

afterEach(async () => {
  await killLeftoverProcesses(workers);
});

afterAll(async () => {
  await governor.close();
  await producer.close();
});

describe('spend limits', () => {
  it('stops a task at its own limit with the budget outcome: not the agent failing, not infra, never retried', async () => {
    const llm = await startFakeLlm({ latencyMs: 2 });
    try {
      const taskLimit = 0.012;
      const runId = await enqueueTestRun(
        { db: services.db, producer },
        {
          benchmark: 'webshop',
          maxTasks: 3,
          maxSteps: 30,
          flags: { split: 'test', agent: 'llm', llmBaseUrl: llm.baseUrl, llmModel: PRICED },
          limits: { maxTaskCostUsd: String(taskLimit), priceTable: priceTable(llm) },
        },
      );
      // Replies that are no action: the episode goes on calling until its step limit or its budget.
      llm.setFaults({ garbage: true });
      const worker = startWorker('budget-task', llm, 3);
      const tasks = await settled(runId);
      const costs = callCosts(llm);
      const maxCall = Math.max(...costs);
      for (const task of tasks) {
        expect(task).toMatchObject({
          status: 'error',
          error_class: 'budget',
          final_api_status: 'BUDGET',
          attempts: 1,
        });
        expect(task.result).toMatchObject({ stop_reason: 'budget', budget_scope: 'task' });
        expect(task.error).toMatch(/^budget: the task spend limit of \$0\.012 is reached/);
        // It ran calls before the limit stopped it, and spent at most one call past the limit.
        expect(task.total_steps).toBeGreaterThan(0);
        expect(task.cost_usd).toBeGreaterThan(0);
        expect(task.cost_usd!).toBeLessThanOrEqual(taskLimit + maxCall);
        const spend = await governor.taskSpend(runId, task.task_id);
        expect(spend.usd).toBeCloseTo(task.cost_usd!, 9);
      }
      const attempts = await services.db
        .selectFrom('attempts')
        .select(['status', 'error_class'])
        .where('run_id', '=', runId)
        .execute();
      expect(attempts).toEqual(tasks.map(() => ({ status: 'error', error_class: 'budget' })));
      const [summary] = await services.db
        .selectFrom('run_summary')
        .selectAll()
        .where('run_id', '=', runId)
        .execute();
      expect(summary).toMatchObject({
        errors: 3,
        infra_failed: 0,
        budget_stopped: 3,
        success_rate: 0,
        success_rate_excluding_infra: null,
        halt: null,
      });
      expect(await stopWorker(worker)).toBe(0);
      expect(worker.output()).not.toContain(KEY);
    } finally {
      await llm.close();
    }
  });

  it('stops a run at its limit on two workers: no task starts after the fence, its open tasks end with budget, the overshoot stays within one call per task in flight and status prints it', async () => {
    const llm = await startFakeLlm({ latencyMs: 20 });
    try {
      const runLimit = 0.05;
      const concurrency = 4;
      // Both workers wait for jobs before there are any, and their first calls are held until
      // each has a full share of episodes under way: the fence meets both with tasks in flight.
      const fleet = [
        startWorker('budget-run-a', llm, concurrency),
        startWorker('budget-run-b', llm, concurrency),
      ];
      await Promise.all(fleet.map((worker) => waitForWorkerReady(worker)));
      llm.hold();
      const runId = await enqueueTestRun(
        { db: services.db, producer },
        {
          benchmark: 'webshop',
          maxTasks: 40,
          maxSteps: 30,
          flags: { split: 'test', agent: 'llm', llmBaseUrl: llm.baseUrl, llmModel: PRICED },
          limits: { maxCostUsd: String(runLimit), priceTable: priceTable(llm) },
        },
      );
      llm.setFaults({ garbage: true });
      await llm.until(() => llm.held() === 2 * concurrency);
      llm.release();
      const tasks = await settled(runId);

      const run = await services.db
        .selectFrom('runs')
        .select(['halt', 'halt_reason', 'halted_at', 'limits'])
        .where('id', '=', runId)
        .executeTakeFirstOrThrow();
      expect(run.halt).toBe('budget');
      expect(run.halt_reason).toMatch(/the run spend limit of \$0\.05 is reached/);
      expect(run.limits).toMatchObject({ max_cost_usd: runLimit, model_price: llm.price });

      // Every task has one outcome; those the fence found waiting never started and say why.
      expect(tasks).toHaveLength(40);
      const neverRan = tasks.filter((task) => task.attempts === 0);
      expect(neverRan.length).toBeGreaterThan(0);
      for (const task of neverRan)
        expect(task).toMatchObject({ status: 'error', error_class: 'budget' });
      for (const task of tasks.filter((t) => t.attempts > 0))
        expect(task.error_class === 'budget' || task.status !== 'error').toBe(true);
      const lateAttempts = await services.db
        .selectFrom('attempts')
        .select('task_id')
        .where('run_id', '=', runId)
        .where('started_at', '>', run.halted_at!)
        .execute();
      expect(lateAttempts).toEqual([]);
      const ranOn = await services.db
        .selectFrom('attempts')
        .select('worker_id')
        .distinct()
        .where('run_id', '=', runId)
        .execute();
      expect(ranOn.map((row) => row.worker_id).sort()).toEqual(['budget-run-a', 'budget-run-b']);

      // The provider's bill is what the governor and the tasks counted; past the limit by at most
      // one call for each task that can be in flight (2 workers × 4 episodes).
      const billed = llm.billed().usd;
      const spend = await governor.runSpend(runId);
      expect(spend.usd).toBeCloseTo(billed, 9);
      expect(spend.fencedAt).not.toBeNull();
      const recorded = tasks.reduce((sum, task) => sum + (task.cost_usd ?? 0), 0);
      expect(recorded).toBeCloseTo(billed, 9);
      const inFlight = 2 * concurrency;
      const overshoot = Math.max(0, billed - runLimit);
      expect(overshoot).toBeLessThanOrEqual(inFlight * Math.max(...callCosts(llm)));

      const status = await runCli('scheduler', ['status', runId], services.env);
      expect(status.code).toBe(0);
      expect(status.stdout).toContain(`run limit $${runLimit.toFixed(6)}`);
      // One spend figure, the run's steps' prices (the provider's bill), said once.
      const steps = await stepSpend(runId);
      expect(steps.usd).toBeCloseTo(billed, 9);
      expect(status.stdout).toContain(
        `spend: $${steps.usd.toFixed(6)} (priced from ${steps.llmSteps} steps)`,
      );
      if (overshoot > 0)
        expect(status.stdout).toMatch(/over by \$0\.\d{6} \(\d+\.\d calls at the mean call cost/);
      // The fence's reason (with what the governor had counted then) stays in the JSON; the text
      // names the limit, and says the spend once.
      expect(status.stdout).toContain(
        '  ! the run reached its spend limit of $0.050000: no new task starts, and its open tasks end with budget\n',
      );
      expect(status.stdout).not.toContain('spent');
      expect(status.stdout.split('\n').filter((line) => line.startsWith('  spend:'))).toHaveLength(
        1,
      );
      expect(status.stdout).toContain(
        '  score: 0.0% success with infra failures counted as failures, n/a with them excluded (0 infra-failed, 40 stopped by a spend limit)',
      );
      expect(status.stdout).toMatch(
        new RegExp(
          `llm fake-model at ${llm.baseUrl.replace(/[./]/g, '\\$&')} key \\S+: \\d+ \\(no limit known\\) req/min, \\d+ \\(no limit known\\) tok/min, 0 429/min \\(0 in all\\), concurrency target \\d+ \\(0 in flight\\)$`,
          'm',
        ),
      );
      expect(status.stdout).not.toContain(KEY);
      const resumed = await runCli('scheduler', ['resume', runId], services.env);
      expect(resumed.code).toBe(2);
      expect(resumed.stderr).toMatch(/stopped at its spend limit .*resume cannot take it up/);
      for (const worker of fleet) expect(await stopWorker(worker)).toBe(0);
    } finally {
      await llm.close();
    }
  });
});

describe('prices given at enqueue', () => {
  it('prices a run by the --price-table given at enqueue on workers with no price table of their own, and holds it to its --max-cost-usd', async () => {
    const llm = await startFakeLlm({ latencyMs: 5 });
    try {
      const runLimit = 0.02;
      const given = priceTable(llm);
      const enqueued = await runCli(
        'scheduler',
        [
          'enqueue',
          '--agent',
          'llm',
          '--llm-base-url',
          llm.baseUrl,
          '--llm-model',
          PRICED,
          '--no-llm-check',
          '--max-tasks',
          '12',
          '--max-steps',
          '30',
          '--price-table',
          given,
          '--max-cost-usd',
          String(runLimit),
        ],
        services.env,
      );
      expect(enqueued.code).toBe(0);
      expect(enqueued.stderr).not.toContain('warning');
      const runId = enqueued.stdout.trim();
      const stored = await services.db
        .selectFrom('runs')
        .select(['price_table', 'limits'])
        .where('id', '=', runId)
        .executeTakeFirstOrThrow();
      expect(stored.price_table).toEqual(JSON.parse(given));
      expect(JSON.stringify(stored)).not.toContain(KEY);

      llm.setFaults({ garbage: true });
      const worker = startWorker('run-priced', llm, 3, { ownPrices: false });
      const tasks = await settled(runId);
      // Priced, never "has no price": each task that ran has a cost, and the run stopped at its limit.
      for (const task of tasks) {
        expect(task.error ?? '').not.toMatch(/has no price/);
        if (task.attempts > 0) expect(task.cost_usd).toBeGreaterThan(0);
      }
      const run = await services.db
        .selectFrom('runs')
        .select(['halt', 'halt_reason'])
        .where('id', '=', runId)
        .executeTakeFirstOrThrow();
      expect(run.halt).toBe('budget');
      expect(run.halt_reason).toMatch(/the run spend limit of \$0\.02 is reached/);
      const billed = llm.billed().usd;
      const spend = await governor.runSpend(runId);
      expect(spend.unpricedCalls).toBe(0);
      expect(spend.usd).toBeCloseTo(billed, 9);
      // Stopped when the next call's estimate would pass the limit: near it, never far below.
      expect(billed).toBeGreaterThan(runLimit / 2);
      // Past the limit by at most one call per task in flight (3 episodes).
      expect(billed - runLimit).toBeLessThanOrEqual(3 * Math.max(...callCosts(llm)));
      expect(await stopWorker(worker)).toBe(0);
      expect(worker.output()).not.toMatch(/has no price/);
    } finally {
      await llm.close();
    }
  });

  it("status RUN shows only the run's own LLM lanes beside another run's, and its spend once", async () => {
    const OTHER = 'other-fake-model';
    const llm = await startFakeLlm({ latencyMs: 2, models: [PRICED, OTHER] });
    try {
      const prices = JSON.stringify({ [PRICED]: llm.price, [OTHER]: llm.price });
      const enqueue = (model: string) =>
        enqueueTestRun(
          { db: services.db, producer },
          {
            benchmark: 'webshop',
            maxTasks: 2,
            maxSteps: 4,
            flags: { split: 'test', agent: 'llm', llmBaseUrl: llm.baseUrl, llmModel: model },
            limits: { maxCostUsd: '5', priceTable: prices },
          },
        );
      const mine = await enqueue(PRICED);
      const other = await enqueue(OTHER);
      const worker = startWorker('status-lanes', llm, 4);
      await settled(mine);
      await settled(other);

      const status = await runCli('scheduler', ['status', mine], services.env);
      expect(status.code).toBe(0);
      const llmLines = status.stdout.split('\n').filter((line) => line.startsWith('  llm '));
      expect(llmLines).toHaveLength(1);
      expect(llmLines[0]).toContain(`llm ${PRICED} at `);
      expect(status.stdout).not.toContain(OTHER);
      // One spend figure: the spend line's, as the run's steps were priced; no lane says spent.
      const steps = await stepSpend(mine);
      expect(steps.usd).toBeGreaterThan(0);
      expect(status.stdout.split('\n').filter((line) => line.startsWith('  spend:'))).toHaveLength(
        1,
      );
      expect(status.stdout).not.toContain('spent');
      expect(status.stdout).toContain(
        `  spend: $${steps.usd.toFixed(6)} (priced from ${steps.llmSteps} steps), run limit $5.00`,
      );
      const json = JSON.parse(
        (await runCli('scheduler', ['status', other, '--json'], services.env)).stdout,
      ) as { lanes: { model: string }[]; spend: { spentUsd: number } };
      expect(json.lanes.map((lane) => lane.model)).toEqual([OTHER]);
      expect(json.spend.spentUsd).toBeCloseTo((await stepSpend(other)).usd, 9);
      expect(await stopWorker(worker)).toBe(0);
    } finally {
      await llm.close();
    }
  });
});

describe('unpriced models', () => {
  const enqueueArgs = (llm: string, model: string) => [
    'enqueue',
    '--agent',
    'llm',
    '--llm-base-url',
    llm,
    '--llm-model',
    model,
    '--no-llm-check',
    '--max-tasks',
    '2',
  ];
  const runCount = async () =>
    Number(
      (
        await services.db
          .selectFrom('runs')
          .select((eb) => eb.fn.countAll<string>().as('n'))
          .executeTakeFirstOrThrow()
      ).n,
    );

  it('warns at enqueue (with a spend limit too), refuses with --refuse-unpriced, and the run says unpriced, never $0', async () => {
    const env = {
      ...services.env,
      LLM_PRICE_TABLE: JSON.stringify({
        [PRICED]: { inputUsdPerMillion: 1, outputUsdPerMillion: 2 },
      }),
    };
    const base = 'http://127.0.0.1:9/v1';
    const before = await runCount();
    const refused = await runCli(
      'scheduler',
      [...enqueueArgs(base, 'no-price-model'), '--refuse-unpriced'],
      env,
    );
    expect(refused.code).toBe(2);
    expect(refused.stderr.trim().split('\n')).toHaveLength(1);
    expect(refused.stderr).toMatch(
      /--refuse-unpriced: model no-price-model has no price; give it with --price-table or LLM_PRICE_TABLE/,
    );
    const badRate = await runCli(
      'scheduler',
      [...enqueueArgs(base, PRICED), '--max-infra-error-rate', '2'],
      env,
    );
    expect(badRate.code).toBe(2);
    expect(badRate.stderr).toMatch(/--max-infra-error-rate 2: expected a share from 0 to 1/);
    expect(await runCount()).toBe(before);

    const warned = await runCli('scheduler', enqueueArgs(base, 'no-price-model'), env);
    expect(warned.code).toBe(0);
    expect(warned.stderr).toMatch(
      /^warning: model no-price-model has no price: this run's cost will show as "unpriced", not \$0/m,
    );
    const runId = warned.stdout.trim();
    const limits = await services.db
      .selectFrom('runs')
      .select('limits')
      .where('id', '=', runId)
      .executeTakeFirstOrThrow();
    expect(limits.limits).toEqual({ model_price: null });

    // A spend limit on a model no table of the run prices: one line says what will happen, exit 0.
    const limited = await runCli(
      'scheduler',
      [...enqueueArgs(base, 'no-price-model'), '--max-cost-usd', '1'],
      env,
    );
    expect(limited.code).toBe(0);
    const warnings = limited.stderr.split('\n').filter((line) => line.startsWith('warning:'));
    expect(warnings).toEqual([
      expect.stringMatching(
        /^warning: --max-cost-usd: model no-price-model has no price in any table this run has, so a worker without a price of its own ends each task with "has no price" instead of running it; give it with --price-table/,
      ),
    ]);
    expect(limited.stdout.trim()).toMatch(/^run-/);
    const status = await runCli('scheduler', ['status', runId], env);
    expect(status.stdout).toContain(
      "spend: unpriced (the run's model has no price: its cost is unknown, not $0)",
    );

    const priced = await runCli('scheduler', enqueueArgs(base, PRICED), env);
    expect(priced.code).toBe(0);
    expect(priced.stderr).not.toContain('warning');
  });
});

describe('infra-error budget', () => {
  it('pauses a run on two workers when a provider fault burst passes --max-infra-error-rate, says why once, and `scheduler resume` finishes it with no task lost or counted twice', async () => {
    const llm = await startFakeLlm({ latencyMs: 5 });
    try {
      const runId = await enqueueTestRun(
        { db: services.db, producer },
        {
          benchmark: 'webshop',
          maxTasks: 30,
          flags: { split: 'test', agent: 'llm', llmBaseUrl: llm.baseUrl, llmModel: PRICED },
          limits: { maxInfraErrorRate: '0.25', infraWindow: '20', priceTable: priceTable(llm) },
        },
      );
      // The agent's own retries would stretch each faulted attempt over ~15 s; without them an
      // attempt fails on the provider's first 5xx, and BullMQ retries the task (5 attempts).
      await services.db
        .updateTable('runs')
        .set({
          agent: sql<string>`jsonb_set(agent, '{retry}', '{"maxRetries":0,"baseDelayMs":0,"maxDelayMs":0,"maxRetryAfterMs":0}'::jsonb)`,
        })
        .where('id', '=', runId)
        .execute();
      llm.setFaults({ status500Times: 1_000 });
      // The burst meets both workers: their first calls wait until each has 4 episodes under way.
      llm.hold();
      const fleet = [startWorker('infra-a', llm, 4), startWorker('infra-b', llm, 4)];
      await llm.until(() => llm.held() === 8);
      llm.release();

      const paused = await waitFor(
        'the run to pause',
        async () => {
          const run = await services.db
            .selectFrom('runs')
            .select(['halt', 'halt_reason'])
            .where('id', '=', runId)
            .executeTakeFirstOrThrow();
          return run.halt === 'infra' ? run : undefined;
        },
        600_000,
        100,
      );
      // More than 25 % of a window of 20: at least 6 infra failures among the tasks that ran.
      expect(paused.halt_reason).toMatch(
        /^paused: ([6-9]|\d\d) of the last \d+ settled tasks failed on infrastructure \(more than 25\.0% of a window of 20\); `scheduler resume run-\S+` takes it up again$/,
      );
      // The attempts under way end; none opens while paused.
      await waitFor(
        'the attempts under way to end',
        async () => {
          const running = await services.db
            .selectFrom('attempts')
            .select('task_id')
            .where('run_id', '=', runId)
            .where('status', '=', 'running')
            .execute();
          return running.length === 0;
        },
        600_000,
        100,
      );
      const attemptsWhilePaused = await services.db
        .selectFrom('attempts')
        .select(['task_id', 'status', 'error_class'])
        .where('run_id', '=', runId)
        .execute();
      expect(
        attemptsWhilePaused.every((a) => a.status === 'error' && a.error_class === 'infra'),
      ).toBe(true);
      expect(attemptsWhilePaused.length).toBeLessThanOrEqual(16);
      const whilePaused = await tasksOf(runId);
      expect(whilePaused.filter((task) => task.status === 'queued').length).toBeGreaterThan(0);
      expect(
        whilePaused.every((task) => task.status === 'queued' || task.status === 'running'),
      ).toBe(true);
      const status = await runCli('scheduler', ['status', runId], services.env);
      expect(status.stdout).toContain(`  ! ${paused.halt_reason}`);
      // Said once, by the worker that paused the run.
      const said = fleet.map((worker) => worker.output().split(paused.halt_reason!).length - 1);
      expect(said.reduce((a, b) => a + b, 0)).toBe(1);

      // The provider recovers; resume takes the run up again.
      llm.setFaults({});
      const resumed = await runCli('scheduler', ['resume', runId], services.env);
      expect(resumed.code).toBe(0);
      expect(resumed.stderr).toContain(`run ${runId} taken up again; it was ${paused.halt_reason}`);
      const tasks = await settled(runId);
      expect(tasks).toHaveLength(30);
      for (const task of tasks) {
        expect(['success', 'failed']).toContain(task.status);
        expect(task.final_api_status).toBe('BOUGHT');
      }
      // Each task has exactly one attempt that was not an infra fault: its outcome's.
      const attempts = await services.db
        .selectFrom('attempts')
        .select(['task_id', 'attempt', 'status', 'error_class'])
        .where('run_id', '=', runId)
        .orderBy('task_id')
        .orderBy('attempt')
        .execute();
      for (const task of tasks) {
        const own = attempts.filter((a) => a.task_id === task.task_id);
        expect(own.filter((a) => a.status !== 'error')).toHaveLength(1);
        expect(own.at(-1)).toMatchObject({ attempt: task.attempts, status: task.status });
        expect(own.slice(0, -1).every((a) => a.error_class === 'infra')).toBe(true);
      }
      const summary = await services.db
        .selectFrom('run_summary')
        .selectAll()
        .where('run_id', '=', runId)
        .executeTakeFirstOrThrow();
      expect(summary).toMatchObject({ total: 30, errors: 0, infra_failed: 0, halt: null });
      expect(summary.succeeded + summary.failed).toBe(30);
      expect(summary.success_rate_excluding_infra).toBe(summary.success_rate);
      expect(new Set(attempts.map((a) => a.task_id)).size).toBe(30);
      const ranOn = await services.db
        .selectFrom('attempts')
        .select('worker_id')
        .distinct()
        .where('run_id', '=', runId)
        .execute();
      expect(ranOn.map((row) => row.worker_id).sort()).toEqual(['infra-a', 'infra-b']);
      for (const worker of fleet) expect(await stopWorker(worker)).toBe(0);
    } finally {
      await llm.close();
    }
  });
});
