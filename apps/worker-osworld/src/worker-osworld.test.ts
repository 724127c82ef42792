import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { readArtifact } from '@benchfleet/artifacts';
import type { OsworldTask } from '@benchfleet/osworld';
import { JobProducer, taskJobId } from '@benchfleet/queue';
import {
  fakeScreenshotPng,
  osworldTestTask,
  startCli,
  startFakeBytebot,
  useTestServices,
  waitFor,
  waitForOutput,
  withFakeScenario,
  writeOsworldTestDataset,
  type FakeBytebot,
  type FakeBytebotOptions,
  type StartedProcess,
  enqueueTestRun,
  runCli,
} from '@benchfleet/testing';

// The worker process against the fake Bytebot agent, with real Postgres, Redis and artifact store.
// Each scripted trajectory of the fake is one test; the scenario rides in the task instruction.

const services = useTestServices();
let producer: JobProducer;
let scratchDir: string;
let artifactsDir: string;
const workers: StartedProcess[] = [];
const fakes: FakeBytebot[] = [];

const FAKE_TIMING = {
  pendingDelayMs: 10,
  stepIntervalMs: 20,
  toolDelayMs: 5,
} satisfies FakeBytebotOptions;
const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

beforeAll(async () => {
  producer = new JobProducer(services.redisUrl, services.prefix);
  scratchDir = await mkdtemp(path.join(tmpdir(), 'worker-osworld-test-'));
  artifactsDir = path.join(scratchDir, 'artifacts');
});

afterAll(async () => {
  for (const worker of workers)
    if (worker.child.exitCode === null && worker.child.signalCode === null)
      worker.child.kill('SIGKILL');
  for (const fake of fakes) await fake.close();
  await producer.close();
  await rm(scratchDir, { recursive: true, force: true });
});

async function startFake(options: FakeBytebotOptions = {}): Promise<FakeBytebot> {
  const fake = await startFakeBytebot({ ...FAKE_TIMING, ...options });
  fakes.push(fake);
  return fake;
}

function startWorker(
  fake: FakeBytebot,
  stackId: string,
  extraEnv: Record<string, string> = {},
): StartedProcess {
  const worker = startCli(
    'worker-osworld',
    ['--bytebot-url', fake.url, '--stack-id', stackId, '--grace-s', '5'],
    {
      ...services.env,
      BENCHFLEET_ARTIFACTS: artifactsDir,
      LOG_LEVEL: 'info',
      ...extraEnv,
    },
  );
  workers.push(worker);
  return worker;
}

async function workerReady(worker: StartedProcess): Promise<void> {
  await waitForOutput(worker, 'worker ready', 'the worker to be ready');
}

async function stopWorker(worker: StartedProcess): Promise<number | null> {
  if (worker.child.exitCode !== null || worker.child.signalCode !== null)
    return worker.child.exitCode;
  worker.child.kill('SIGTERM');
  return (await worker.exited).code;
}

/** Writes a small `osworld_dataset.json` and enqueues it the way `scheduler enqueue --dataset` does. */
async function enqueueTasks(
  tasks: OsworldTask[],
  options: { maxSteps?: number; stallTimeoutS?: string } = {},
): Promise<string> {
  const datasetPath = await writeOsworldTestDataset(
    scratchDir,
    `dataset-${tasks[0]?.task_id ?? 'empty'}`,
    tasks,
  );
  const { stallTimeoutS, ...shared } = options;
  return enqueueTestRun(
    { db: services.db, producer },
    {
      benchmark: 'osworld',
      ...shared,
      flags: { dataset: datasetPath, ...(stallTimeoutS ? { stallTimeoutS } : {}) },
    },
  );
}

async function settledTask(runId: string, taskId: string, timeoutMs = 600_000) {
  return waitFor(
    `task ${taskId} of run ${runId} to settle`,
    async () => {
      const task = await services.db
        .selectFrom('tasks')
        .selectAll()
        .where('run_id', '=', runId)
        .where('task_id', '=', taskId)
        .executeTakeFirst();
      return task && task.status !== 'queued' && task.status !== 'running' ? task : undefined;
    },
    timeoutMs,
    50,
  );
}

async function attemptsOf(runId: string, taskId: string) {
  return services.db
    .selectFrom('attempts')
    .selectAll()
    .where('run_id', '=', runId)
    .where('task_id', '=', taskId)
    .orderBy('attempt')
    .execute();
}

async function stepsOf(runId: string, taskId: string, attempt: number) {
  return services.db
    .selectFrom('steps')
    .selectAll()
    .where('run_id', '=', runId)
    .where('task_id', '=', taskId)
    .where('attempt', '=', attempt)
    .orderBy('step')
    .execute();
}

async function jobState(runId: string, taskId: string): Promise<string> {
  const job = await producer.queue('osworld').getJob(taskJobId(runId, taskId));
  return job ? await job.getState() : 'missing';
}

describe('worker-osworld on one stack: the scripted trajectories', () => {
  let fake: FakeBytebot;
  let worker: StartedProcess;

  beforeAll(async () => {
    fake = await startFake();
    worker = startWorker(fake, 'stack-1');
    await workerReady(worker);
  });

  afterAll(async () => {
    expect(await stopWorker(worker)).toBe(0);
    expect(fake.stats.maxConcurrentRunning).toBe(1);
  });

  it('completes: success, one steps row per ASSISTANT message, screenshots in the artifact store', async () => {
    const runId = await enqueueTasks([
      osworldTestTask('os-completes', withFakeScenario('Open the terminal', 'completes')),
    ]);
    const task = await settledTask(runId, 'os-completes');
    expect(task).toMatchObject({
      status: 'success',
      final_api_status: 'COMPLETED',
      total_steps: 4,
      attempts: 1,
      success: true,
      reward: 1,
      answer: 'The task is done.',
      worker_id: 'stack-1',
      error: null,
    });
    expect(task.result).toMatchObject({
      stop_reason: 'end_status',
      bytebot_task_id: task.external_id,
    });
    expect(task.duration_ms).toBeGreaterThan(0);

    const bytebotTask = fake.tasks().find((row) => row.id === task.external_id);
    expect(bytebotTask?.status).toBe('COMPLETED');
    expect(bytebotTask?.description).toBe(task.instruction);
    const assistantMessages = fake
      .messagesOf(task.external_id!)
      .filter((message) => message.role === 'ASSISTANT');

    const steps = await stepsOf(runId, 'os-completes', 1);
    expect(steps.map((step) => step.step)).toEqual([1, 2, 3, 4]);
    expect(steps.map((step) => step.external_id)).toEqual(
      assistantMessages.map((message) => message.id),
    );
    expect(steps.map((step) => step.at.toISOString())).toEqual(
      assistantMessages.map((message) => message.createdAt),
    );
    expect(steps.map((step) => step.action)).toEqual([
      { tool_calls: [{ name: 'computer_screenshot', input: {} }] },
      {
        tool_calls: [
          {
            name: 'computer_click_mouse',
            input: { coordinates: { x: 102, y: 200 }, button: 'left', clickCount: 1 },
          },
        ],
      },
      {
        tool_calls: [
          {
            name: 'computer_click_mouse',
            input: { coordinates: { x: 103, y: 200 }, button: 'left', clickCount: 1 },
          },
        ],
      },
      {
        tool_calls: [
          {
            name: 'set_task_status',
            input: { status: 'completed', description: 'The task is done.' },
          },
        ],
      },
    ]);
    expect(steps.map((step) => step.text)).toEqual([
      'Let me look at the screen.',
      'Clicking the next control (step 2).',
      'Clicking the next control (step 3).',
      'The task is complete.',
    ]);

    // The three computer actions come back with a screenshot; set_task_status's result has none.
    expect(steps[3]!.screenshot_uri).toBeNull();
    for (const step of steps.slice(0, 3)) {
      expect(step.screenshot_uri).toMatch(/^file:\/\//);
      expect(step.screenshot_uri).toContain(
        `${runId}/os-completes/attempt-1/step_00${step.step}.png`,
      );
      const png = await readArtifact(step.screenshot_uri!);
      expect(png.subarray(0, 8)).toEqual(PNG_SIGNATURE);
      expect(png).toEqual(fakeScreenshotPng(step.step));
    }

    const attempts = await attemptsOf(runId, 'os-completes');
    expect(
      attempts.map((a) => [a.attempt, a.status, a.error_class, a.worker_id, a.external_id]),
    ).toEqual([[1, 'success', null, 'stack-1', task.external_id]]);
  });

  it('needs help: failed with the agent answer, control handed to a user who never comes', async () => {
    const runId = await enqueueTasks([
      osworldTestTask(
        'os-needs-help',
        withFakeScenario('Log in to the mail client', 'needs-help'),
        'thunderbird',
      ),
    ]);
    const task = await settledTask(runId, 'os-needs-help');
    expect(task).toMatchObject({
      status: 'failed',
      final_api_status: 'NEEDS_HELP',
      total_steps: 3,
      attempts: 1,
      success: false,
      reward: 0,
      answer: 'I need the password to continue.',
    });
    const steps = await stepsOf(runId, 'os-needs-help', 1);
    expect(steps).toHaveLength(3);
    expect(steps[2]!.action).toEqual({
      tool_calls: [
        {
          name: 'set_task_status',
          input: { status: 'needs_help', description: 'I need the password to continue.' },
        },
      ],
    });
    expect(
      (await attemptsOf(runId, 'os-needs-help')).map((a) => [a.status, a.error_class]),
    ).toEqual([['failed', null]]);
  });

  it('never finishes: cancelled at the step limit, with a cancel sent to the agent', async () => {
    const cancelsBefore = fake.stats.cancels;
    const runId = await enqueueTasks(
      [osworldTestTask('os-endless', withFakeScenario('Keep clicking', 'never-finishes'))],
      { maxSteps: 3 },
    );
    const task = await settledTask(runId, 'os-endless');
    expect(task).toMatchObject({
      status: 'cancelled',
      final_api_status: 'CANCELLED',
      total_steps: 3,
      attempts: 1,
      answer: null,
    });
    expect(task.result).toMatchObject({ stop_reason: 'step_limit' });
    expect(fake.stats.cancels).toBe(cancelsBefore + 1);
    expect(fake.tasks().find((row) => row.id === task.external_id)?.status).toBe('CANCELLED');
    const steps = await stepsOf(runId, 'os-endless', 1);
    expect(steps.map((step) => step.step)).toEqual([1, 2, 3]);
    expect(steps.every((step) => step.screenshot_uri !== null)).toBe(true);
    expect((await attemptsOf(runId, 'os-endless')).map((a) => [a.status, a.error_class])).toEqual([
      ['cancelled', null],
    ]);
  });

  it('silent: cancelled after the stall timeout of the run, with a cancel sent to the agent', async () => {
    const cancelsBefore = fake.stats.cancels;
    const runId = await enqueueTasks(
      [osworldTestTask('os-silent', withFakeScenario('Think about it', 'silent'))],
      { stallTimeoutS: '1' },
    );
    const task = await settledTask(runId, 'os-silent');
    expect(task).toMatchObject({
      status: 'cancelled',
      final_api_status: 'CANCELLED',
      total_steps: 0,
      attempts: 1,
    });
    expect(task.result).toMatchObject({ stop_reason: 'stalled' });
    expect(task.duration_ms).toBeGreaterThanOrEqual(1_000);
    expect(fake.stats.cancels).toBe(cancelsBefore + 1);
    expect(fake.tasks().find((row) => row.id === task.external_id)?.status).toBe('CANCELLED');
    expect(await stepsOf(runId, 'os-silent', 1)).toEqual([]);
  });

  it('a create the stack refuses (HTTP 400): a final error with CREATE_FAILED, recorded once as permanent', async () => {
    const createdBefore = fake.stats.createdTasks;
    const runId = await enqueueTasks([
      osworldTestTask('os-rejected', withFakeScenario('Store this', 'rejected')),
    ]);
    const task = await settledTask(runId, 'os-rejected');
    expect(task).toMatchObject({
      status: 'error',
      final_api_status: 'CREATE_FAILED',
      total_steps: 0,
      attempts: 1,
      external_id: null,
      duration_ms: 0,
    });
    expect(task.error).toMatch(/POST \/tasks failed with HTTP 400/);
    expect(task.result).toMatchObject({ stop_reason: 'create_failed', bytebot_task_id: '' });
    expect(fake.stats.createdTasks).toBe(createdBefore);
    expect((await attemptsOf(runId, 'os-rejected')).map((a) => [a.status, a.error_class])).toEqual([
      ['error', 'permanent'],
    ]);
    // The outcome is in Postgres before the worker hands the job back to BullMQ: wait for that, then
    // check it was completed, not failed for a retry.
    const finalState = await waitFor(
      'the job to leave active',
      async () => {
        const state = await jobState(runId, 'os-rejected');
        return state === 'active' ? undefined : state;
      },
      600_000,
      25,
    );
    expect(finalState).toBe('completed');
  });

  // Once recorded as the agent's final CREATE_FAILED, which resume would never run again.
  it.each([
    [
      'fails (HTTP 500)',
      'server-error',
      /could not create the task \(POST \/tasks failed with HTTP 500/,
    ],
    [
      'answers garbage',
      'create-garbage',
      /could not create the task \(POST \/tasks returned an unexpected body/,
    ],
  ])(
    'a create the stack %s: a transient fault of the stack, retried later',
    async (_what, scenario, error) => {
      const runId = await enqueueTasks([
        osworldTestTask(`os-${scenario}`, withFakeScenario('Store this', scenario)),
      ]);
      const [attempt] = await waitFor('the first attempt to end', async () => {
        const attempts = await attemptsOf(runId, `os-${scenario}`);
        return attempts[0]?.status === 'error' ? attempts : undefined;
      });
      expect(attempt).toMatchObject({ error_class: 'infra' });
      expect(attempt!.error).toMatch(error);
      // The stack answered: it is not called unreachable.
      expect(attempt!.error).toMatch(
        /^Bytebot answered POST \/tasks, but the stack cannot take the task: /,
      );
      expect(attempt!.error).not.toMatch(/unreachable/);
      await waitFor(
        'the job to wait for its retry',
        async () => (await jobState(runId, `os-${scenario}`)) === 'delayed',
        600_000,
        50,
      );
      const task = await services.db
        .selectFrom('tasks')
        .selectAll()
        .where('run_id', '=', runId)
        .executeTakeFirstOrThrow();
      expect(task).toMatchObject({ status: 'running', final_api_status: null });

      // `scheduler status` says the task waits to be retried, and when: held 10 minutes off by the
      // test, so that no retry can start while it looks.
      const job = (await producer.queue('osworld').getJob(taskJobId(runId, `os-${scenario}`)))!;
      const before = Date.now();
      await job.changeDelay(10 * 60_000);
      const after = Date.now();
      const status = await runCli('scheduler', ['status', runId, '--json'], services.env);
      const snapshot = JSON.parse(status.stdout) as {
        retrying: { taskId: string; retryAt: string; failedAttempt: number }[];
      };
      expect(snapshot.retrying).toEqual([
        {
          taskId: `os-${scenario}`,
          failedAttempt: 1,
          error: attempt!.error,
          nextAttempt: 2,
          maxAttempts: 4,
          retryAt: expect.any(String),
        },
      ]);
      const retryAt = Date.parse(snapshot.retrying[0]!.retryAt);
      expect(retryAt).toBeGreaterThanOrEqual(before + 10 * 60_000 - 1);
      expect(retryAt).toBeLessThanOrEqual(after + 10 * 60_000 + 1);
      const text = (await runCli('scheduler', ['status', runId], services.env)).stdout;
      expect(text).toContain('0 running, 1 waiting to retry');
      expect(text).toContain(
        `  ~ os-${scenario}: attempt 1 failed (${attempt!.error}); attempt 2 of 4 at ${snapshot.retrying[0]!.retryAt} (in 10 min)`,
      );
      await (await producer.queue('osworld').getJob(taskJobId(runId, `os-${scenario}`)))!.remove();
    },
  );
});

describe('worker-osworld when the stack or the worker goes away', () => {
  const stackWorkers: StartedProcess[] = [];
  afterEach(async () => {
    for (const worker of stackWorkers.splice(0)) await stopWorker(worker);
    // A test that failed half-way must not leave a job for the next test's workers.
    await producer.queue('osworld').obliterate({ force: true });
  });

  it('a stack that dies mid-task: an infra error, retried on the stack when it is back', async () => {
    // Two steps, then the agent goes quiet; the test takes the stack away once the worker has read both.
    const doomed = await startFake({
      chooseScenario: () => ({ steps: 2, ending: { kind: 'silent' } }),
    });
    const worker = startWorker(doomed, 'stack-dies');
    stackWorkers.push(worker);
    const runId = await enqueueTasks([osworldTestTask('os-dies', 'Open VLC', 'vlc')]);
    await waitFor(
      'both steps of the first attempt',
      async () => (await stepsOf(runId, 'os-dies', 1)).length === 2,
      600_000,
      50,
    );
    await doomed.kill();

    // The client tries 3 more times (2, 4, 8 s) before it calls the stack unavailable.
    const [firstAttempt] = await waitFor(
      'the first attempt to fail',
      async () => {
        const attempts = await attemptsOf(runId, 'os-dies');
        return attempts[0]?.status === 'error' ? attempts : undefined;
      },
      600_000,
      100,
    );
    const leftoverId = doomed.tasks()[0]!.id;
    expect(firstAttempt).toMatchObject({
      attempt: 1,
      error_class: 'infra',
      external_id: leftoverId,
      worker_id: 'stack-dies',
    });
    expect(firstAttempt!.error).toMatch(/Bytebot unreachable/);
    // The log says what the hand-back did: the job's tries untouched, the attempt recorded (in
    // one line, or in a second one when the worker handed the job back while the attempt still ran).
    await waitForOutput(
      worker,
      new RegExp(
        `job handed back to the queue without using one of its 4 tries(; its attempt 1 is recorded as an infra error \\(handed back\\))?: the Bytebot agent at ${doomed.url} does not answer`,
      ),
      'the hand-back to be logged',
      600_000,
    );
    await waitForOutput(
      worker,
      /its attempt 1 is recorded as an infra error \(handed back\)/,
      "the attempt's record to be logged",
      600_000,
    );
    expect(worker.output()).not.toContain('no attempt used');
    // The steps seen before the stack died stay with the attempt that saw them.
    expect(await stepsOf(runId, 'os-dies', 1)).toHaveLength(2);
    const pending = await services.db
      .selectFrom('tasks')
      .selectAll()
      .where('run_id', '=', runId)
      .executeTakeFirstOrThrow();
    expect(pending).toMatchObject({ status: 'running', attempts: 1, external_id: leftoverId });
    await waitFor(
      'the job to wait out its backoff',
      async () => (await jobState(runId, 'os-dies')) === 'delayed',
      600_000,
      50,
    );

    // The stack comes back on the same address; this time the agent finishes the task.
    const revived = await startFake({ port: doomed.port });
    await (await producer.queue('osworld').getJob(taskJobId(runId, 'os-dies')))!.promote();
    const task = await settledTask(runId, 'os-dies');
    expect(task).toMatchObject({
      status: 'success',
      final_api_status: 'COMPLETED',
      attempts: 2,
      total_steps: 4,
    });
    expect(task.external_id).toBe(revived.tasks()[0]!.id);
    const attempts = await attemptsOf(runId, 'os-dies');
    expect(attempts.map((a) => [a.attempt, a.status, a.error_class])).toEqual([
      [1, 'error', 'infra'],
      [2, 'success', null],
    ]);
    // The job used up no attempt: the stack was down, which is not the task's fault.
    expect(attempts[1]!.job_attempt).toBe(1);
    // The revived agent lost its tasks (the fake keeps no database): nothing was left to cancel.
    expect(revived.stats.requestsByRoute['POST /tasks/:id/cancel'] ?? 0).toBe(0);
    expect(await stepsOf(runId, 'os-dies', 2)).toHaveLength(4);
  });

  it("a worker killed mid-task: the stack's next worker cancels the Bytebot task it left running, then runs the task again", async () => {
    let creates = 0;
    // The first run of the task never ends; the second completes.
    const fake = await startFake({
      chooseScenario: () => (creates++ === 0 ? 'never-finishes' : undefined),
    });
    const fastStall = { BENCHFLEET_LOCK_MS: '1000' };
    const doomed = startWorker(fake, 'stack-doomed', fastStall);
    stackWorkers.push(doomed);
    // A loaded machine may take long to start a process; the waits below are for the task only.
    await workerReady(doomed);
    const runId = await enqueueTasks([
      osworldTestTask('os-orphan', withFakeScenario('Rename the file', 'completes')),
    ]);
    await waitFor(
      'two steps of the first attempt',
      async () => (await stepsOf(runId, 'os-orphan', 1)).length >= 2,
      600_000,
      50,
    );
    doomed.child.kill('SIGKILL');
    await doomed.exited;
    const orphan = fake.tasks()[0]!;
    expect(orphan.status).toBe('RUNNING');

    const rescuer = startWorker(fake, 'stack-rescuer', fastStall);
    stackWorkers.push(rescuer);
    const task = await settledTask(runId, 'os-orphan');
    expect(task).toMatchObject({
      status: 'success',
      attempts: 2,
      worker_id: 'stack-rescuer',
      total_steps: 4,
    });
    expect(fake.stats.cancels).toBe(1);
    const rows = fake.tasks();
    expect(rows).toHaveLength(2);
    expect(rows.find((row) => row.id === orphan.id)?.status).toBe('CANCELLED');
    expect(rows.find((row) => row.id === task.external_id)?.status).toBe('COMPLETED');
    expect(fake.stats.maxConcurrentRunning).toBe(1);
    const attempts = await attemptsOf(runId, 'os-orphan');
    expect(attempts.map((a) => [a.worker_id, a.status, a.error_class, a.external_id])).toEqual([
      ['stack-doomed', 'error', 'infra', orphan.id],
      ['stack-rescuer', 'success', null, task.external_id],
    ]);
    expect(rescuer.output()).toMatch(
      new RegExp(
        `"bytebotTask":"${orphan.id}","status":"RUNNING","outcome":"cancelled".*cancelled a task left on this stack`,
      ),
    );
  });

  it('a stack that answers HTTP 500 pauses the worker, which says what the stack answered', async () => {
    const stack = await startFake();
    stack.failRequests(1_000_000, 500);
    const worker = startWorker(stack, 'stack-500');
    stackWorkers.push(worker);
    await waitForOutput(
      worker,
      /could not look for tasks left on the stack; will look again before the first task/,
      'the worker to say it will look for leftovers later',
    );
    const runId = await enqueueTasks([
      osworldTestTask('os-500', withFakeScenario('Open the calculator', 'completes')),
    ]);
    const reason = `the Bytebot agent at ${stack.url} answers GET /tasks with HTTP 500`;
    await waitForOutput(worker, `paused: ${reason}`, 'the worker to pause', 600_000);
    const status = await runCli('scheduler', ['status', runId, '--json'], services.env);
    const snapshot = JSON.parse(status.stdout) as {
      workers: { reason: string }[];
      notes: string[];
    };
    expect(snapshot.workers).toMatchObject([
      { workerId: 'stack-500', state: 'paused', reason: expect.stringContaining(reason) },
    ]);
    expect(snapshot.notes.join('\n')).toContain(`is paused since`);
    expect(JSON.stringify(snapshot)).not.toMatch(/does not answer|unreachable/);
    expect(await attemptsOf(runId, 'os-500')).toEqual([]);
  });

  it('a dead stack pauses the worker: the task stays queued until the stack answers again, then completes', async () => {
    const stack = await startFake();
    const port = stack.port;
    const worker = startWorker(stack, 'stack-dead');
    stackWorkers.push(worker);
    await workerReady(worker);
    await stack.kill();

    const runId = await enqueueTasks([
      osworldTestTask('os-waits', withFakeScenario('Open the calculator', 'completes')),
    ]);
    await waitForOutput(
      worker,
      `paused: the Bytebot agent at http://127.0.0.1:${port} does not answer`,
      'the worker to pause',
      600_000,
    );
    const queued = await services.db
      .selectFrom('tasks')
      .selectAll()
      .where('run_id', '=', runId)
      .executeTakeFirstOrThrow();
    expect(queued).toMatchObject({ status: 'queued', attempts: 0 });
    // `scheduler status` says which worker is paused and why.
    const status = await runCli('scheduler', ['status', runId, '--json'], services.env);
    expect(JSON.parse(status.stdout)).toMatchObject({
      workers: [
        {
          workerId: 'stack-dead',
          queue: 'osworld',
          state: 'paused',
          reason: expect.stringMatching(
            new RegExp(`^the Bytebot agent at http://127.0.0.1:${port} does not answer`),
          ),
        },
      ],
      notes: expect.arrayContaining([
        expect.stringMatching(
          /^worker stack-dead is paused since .*: the Bytebot agent at .* does not answer/,
        ),
        expect.stringMatching(/^no worker is consuming queue osworld/),
      ]),
    });
    expect(await attemptsOf(runId, 'os-waits')).toEqual([]);
    expect(['delayed', 'waiting']).toContain(await jobState(runId, 'os-waits'));

    const revived = await startFake({ port });
    const task = await settledTask(runId, 'os-waits', 600_000);
    expect(task).toMatchObject({
      status: 'success',
      attempts: 1,
      total_steps: 4,
      worker_id: 'stack-dead',
    });
    expect(revived.stats.createdTasks).toBe(1);
    expect(worker.output()).toContain('health check passed: resuming');
  });
});
