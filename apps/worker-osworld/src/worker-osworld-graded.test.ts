import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { zipSync } from 'fflate';
import { sql } from 'kysely';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { readArtifact } from '@benchfleet/artifacts';
import {
  NO_DESKTOP_SERVER_REASON,
  OsworldGradesRepository,
  type OsworldTask,
} from '@benchfleet/osworld';
import { JobProducer, taskJobId } from '@benchfleet/queue';
import { benchmarks } from '@benchfleet/benchmarks';
import { enqueueRun, planRun } from '@benchfleet/runs';
import {
  FAKE_LLM_PRICE,
  osworldExampleTask,
  runCli,
  startCli,
  startFakeGradedStack,
  startFakeLlm,
  useTestServices,
  waitFor,
  waitForOutput,
  writeOsworldTestDataset,
  type FakeBytebotScenario,
  type FakeGradedStack,
  type StartedProcess,
} from '@benchfleet/testing';

// Graded runs through the real worker process (worker-osworld), real Postgres, Redis and artifact
// store, on a fake graded stack: the fake Bytebot agent acts on the fake desktop, whose OSWorld
// VM server sets each task up and reads its end state; downloads come from a fake web host.

const services = useTestServices();
const POSTER_TASK = '5ea617a3-0e86-4ba6-aab2-dac9aa2e8d57';
const POSTER_URL =
  'https://huggingface.co/datasets/xlangai/ubuntu_osworld_file_cache/resolve/main/os/5ea617a3-0e86-4ba6-aab2-dac9aa2e8d57/poster_party_night.webp';
const RESTORE_POSTER =
  'mv ~/.local/share/Trash/files/poster_party_night.webp ~/Desktop/poster_party_night.webp';
const INFEASIBLE_TASK = 'b3d4a89c-53f2-4d6b-8b6a-541fb5d205fa';
const CALCULATOR_TASK = 'f918266a-b3e0-4914-865d-4faa564f1aef';
const CALCULATOR_BASE =
  'https://huggingface.co/datasets/xlangai/ubuntu_osworld_file_cache/resolve/main/multi_apps/f918266a-b3e0-4914-865d-4faa564f1aef/';

let producer: JobProducer;
let scratchDir: string;
let artifactsDir: string;
let fakes: FakeGradedStack;
const workers: StartedProcess[] = [];

/** Plans a run as `scheduler enqueue` does, graded (`config.grade`) unless told otherwise. */
async function enqueueTasks(tasks: OsworldTask[], grade = true): Promise<string> {
  const dataset = await writeOsworldTestDataset(
    scratchDir,
    `dataset-${Math.random().toString(36).slice(2)}`,
    tasks,
  );
  const planned = await planRun(
    benchmarks,
    { benchmark: 'osworld', domains: [], flags: { dataset }, maxSteps: 20 },
    { db: services.db, env: process.env },
  );
  return enqueueRun(
    { db: services.db, producer },
    { ...planned, config: { ...(planned.config as object), grade } },
  );
}

function gradedWorkerArgs(stack: FakeGradedStack, stackId: string): string[] {
  return [
    '--bytebot-url',
    stack.bytebot.url,
    '--desktop-url',
    stack.bytebotd.url,
    '--desktop-server-url',
    stack.vm.url,
    '--reset-command',
    stack.resetCommand,
    '--screen-size',
    '1280x960',
    '--grading-cache',
    path.join(scratchDir, `grading-${stackId}`),
    '--download-mirrors',
    stack.web.urlRewrites.map((rewrite) => `${rewrite.from}=${rewrite.to}`).join(','),
    '--stack-id',
    stackId,
    '--grace-s',
    '5',
  ];
}

function startWorker(args: string[], extraEnv: Record<string, string> = {}): StartedProcess {
  const worker = startCli('worker-osworld', args, {
    ...services.env,
    BENCHFLEET_ARTIFACTS: artifactsDir,
    OSWORLD_VM_RETRY_DELAY_MS: '20',
    LOG_LEVEL: 'info',
    ...extraEnv,
  });
  workers.push(worker);
  return worker;
}

async function stopWorker(worker: StartedProcess): Promise<number | null> {
  if (worker.child.exitCode !== null || worker.child.signalCode !== null)
    return worker.child.exitCode;
  worker.child.kill('SIGTERM');
  return (await worker.exited).code;
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

/** The first attempt once it has failed (the job then waits out its backoff). */
async function failedFirstAttempt(runId: string, taskId: string) {
  const [first] = await waitFor(
    'the first attempt to fail',
    async () => {
      const attempts = await attemptsOf(runId, taskId);
      return attempts[0]?.status === 'error' ? attempts : undefined;
    },
    600_000,
    50,
  );
  return first!;
}

async function promoteRetry(runId: string, taskId: string): Promise<void> {
  const job = await producer.queue('osworld').getJob(taskJobId(runId, taskId));
  await waitFor(
    'the job to wait out its backoff',
    async () => (await job!.getState()) === 'delayed',
    600_000,
    50,
  );
  await job!.promote();
}

const grades = () => new OsworldGradesRepository(services.db);

const completes = (desktopCommands: Record<number, string> = {}): FakeBytebotScenario => ({
  steps: 3,
  ending: { kind: 'completed', answer: 'Done.' },
  desktopCommands,
});

beforeAll(async () => {
  producer = new JobProducer(services.redisUrl, services.prefix);
  scratchDir = await mkdtemp(path.join(tmpdir(), 'worker-osworld-graded-'));
  artifactsDir = path.join(scratchDir, 'artifacts');
  fakes = await startFakeGradedStack({
    scenario: completes(),
    vm: { apps: ['code', 'firefox', 'thunar'] },
  });
  fakes.web.serve(POSTER_URL, 'RIFF....WEBPVP8 poster');
  fakes.web.serve(
    `${CALCULATOR_BASE}calculator.zip`,
    Buffer.from(zipSync({ 'calculator.py': Buffer.from('print(6 * 7)\n') })),
  );
  fakes.web.serve(`${CALCULATOR_BASE}log_Gold.txt`, '42\n');
});

afterAll(async () => {
  for (const worker of workers)
    if (worker.child.exitCode === null && worker.child.signalCode === null)
      worker.child.kill('SIGKILL');
  await fakes.close();
  await producer.close();
  await rm(scratchDir, { recursive: true, force: true });
});

describe('worker-osworld, graded runs: reset → setup → agent → postconfig → getters → metric → both words', () => {
  let worker: StartedProcess;

  beforeAll(async () => {
    worker = startWorker(gradedWorkerArgs(fakes, 'stack-graded'), {
      BENCHFLEET_DESKTOP_IMAGE: 'benchfleet-desktop:test-1',
    });
    await waitForOutput(worker, 'worker ready', 'the graded worker to be ready');
  });

  afterAll(async () => {
    expect(await stopWorker(worker)).toBe(0);
  });

  afterEach(async () => {
    // A test that failed half-way must not leave a job for the next test.
    await producer.queue('osworld').obliterate({ force: true });
  });

  it('an agent that does the task right: COMPLETED and graded 1.0, the grade written in its attempt', async () => {
    fakes.setScenario(completes({ 2: RESTORE_POSTER }));
    const runId = await enqueueTasks([await osworldExampleTask('os', POSTER_TASK)]);
    const task = await settledTask(runId, POSTER_TASK);
    // The agent's word, as an ungraded run records it…
    expect(task).toMatchObject({
      status: 'success',
      final_api_status: 'COMPLETED',
      success: true,
      attempts: 1,
      total_steps: 4,
    });
    // …the stack's desktop image, for provenance…
    expect(task.result).toMatchObject({ desktop_image: 'benchfleet-desktop:test-1' });
    // …and OSWorld's grade of the end state, of the same attempt.
    const [grade, ...more] = await grades().gradesOfTask(runId, POSTER_TASK);
    expect(more).toEqual([]);
    expect(grade).toMatchObject({
      attempt: 1,
      grade_no: 1,
      score: 1,
      fidelity: 'graded',
      final_signal: 'DONE',
      bytebot_status: 'COMPLETED',
      final_signal_mapping: 'bytebot-status-to-osworld-final-action/v1',
      no_score_cause: null,
    });
    expect(grade!.setup).toMatchObject({
      reset: { exitCode: 0 },
      setup: { downloads: [expect.objectContaining({ url: POSTER_URL })] },
    });
    // Written before the task settled: the conditional insert needs the attempt still running.
    expect(grade!.graded_at.getTime()).toBeLessThanOrEqual(task.finished_at!.getTime());
    const [row] = await grades().taskGrades(runId);
    expect(row).toMatchObject({ claimed_success: true, graded_success: true, score: 1 });
  });

  it('an agent that lies: it says COMPLETED, the end state is wrong: the agent’s word is success, the grade 0', async () => {
    fakes.setScenario(completes());
    const runId = await enqueueTasks([await osworldExampleTask('os', POSTER_TASK)]);
    const task = await settledTask(runId, POSTER_TASK);
    expect(task).toMatchObject({ status: 'success', final_api_status: 'COMPLETED', success: true });
    const [grade] = await grades().gradesOfTask(runId, POSTER_TASK);
    expect(grade).toMatchObject({ score: 0, fidelity: 'graded', final_signal: 'DONE' });
    expect(await grades().runGrading(runId)).toMatchObject({
      tasks: 1,
      claimed_but_failed: 1,
      claimed_and_passed: 0,
    });
  });

  it('the infeasible task answered both ways: NEEDS_HELP (FAIL) grades 1, COMPLETED grades 0', async () => {
    const task = await osworldExampleTask('os', INFEASIBLE_TASK);
    fakes.setScenario({ steps: 1, ending: { kind: 'needs_help', answer: 'No Bluetooth here.' } });
    const gaveUp = await enqueueTasks([task]);
    expect(await settledTask(gaveUp, INFEASIBLE_TASK)).toMatchObject({
      status: 'failed',
      final_api_status: 'NEEDS_HELP',
    });
    expect((await grades().gradesOfTask(gaveUp, INFEASIBLE_TASK))[0]).toMatchObject({
      score: 1,
      python_type: 'int',
      final_signal: 'FAIL',
      bytebot_status: 'NEEDS_HELP',
    });

    fakes.setScenario(completes());
    const claimed = await enqueueTasks([task]);
    expect(await settledTask(claimed, INFEASIBLE_TASK)).toMatchObject({ status: 'success' });
    expect((await grades().gradesOfTask(claimed, INFEASIBLE_TASK))[0]).toMatchObject({
      score: 0,
      final_signal: 'DONE',
    });
  });

  it("a getter's file missing: OSWorld's rule scores it 0, and the gold file it fetched is in the artifact store", async () => {
    fakes.setScenario(completes());
    const runId = await enqueueTasks([await osworldExampleTask('multi_apps', CALCULATOR_TASK)]);
    expect(await settledTask(runId, CALCULATOR_TASK)).toMatchObject({ status: 'success' });
    const [grade] = await grades().gradesOfTask(runId, CALCULATOR_TASK);
    expect(grade).toMatchObject({ score: 0, fidelity: 'graded', no_score_cause: null });
    const endState = grade!.end_state as { name: string; uri: string }[];
    expect(endState.map((file) => file.name)).toEqual(['log_Gold.txt']);
    expect((await readArtifact(endState[0]!.uri)).toString()).toBe('42\n');
  });

  it('a run without --grade on a graded worker: no reset, no setup, no grade, as today', async () => {
    fakes.setScenario(completes());
    const before = fakes.vm.requests.length;
    const runId = await enqueueTasks([await osworldExampleTask('os', POSTER_TASK)], false);
    expect(await settledTask(runId, POSTER_TASK)).toMatchObject({
      status: 'success',
      final_api_status: 'COMPLETED',
    });
    expect(fakes.vm.requests.length).toBe(before);
    expect(await grades().gradesOfTask(runId, POSTER_TASK)).toEqual([]);
  });
});

describe("worker-osworld's health check while it resets its own stack", () => {
  it('does not take the desktop it is recreating for a lost stack: the task is not handed back', async () => {
    const marker = path.join(scratchDir, 'resetting');
    const release = path.join(scratchDir, 'reset-may-finish');
    // The reset holds until the test lets it finish, as a slow recreation of the desktop would.
    const resetCommand = `touch '${marker}'; while [ ! -e '${release}' ]; do sleep 0.05; done; rm -f '${marker}' '${release}'; ${fakes.resetCommand}`;
    const args = gradedWorkerArgs(fakes, 'stack-resetting');
    args[args.indexOf('--reset-command') + 1] = resetCommand;
    // Hand-back within 3 s of a lost service: a reset that counted as one would lose the task.
    const worker = startWorker(args, { BENCHFLEET_HANDBACK_S: '3' });
    await waitForOutput(worker, 'worker ready', 'the worker to be ready');
    fakes.setScenario(completes({ 2: RESTORE_POSTER }));
    const runId = await enqueueTasks([await osworldExampleTask('os', POSTER_TASK)]);
    await waitFor('the reset to start', async () => existsSync(marker), 600_000, 20);

    // The recreated desktop's bytebotd is down while the reset runs.
    await fakes.bytebotd.kill();
    const downSince = Date.now();
    // The worker keeps checking its services (each check writes its row) past its hand-back bound.
    await waitFor(
      "the worker's checks to go on past its hand-back bound",
      async () => {
        const { rows } = await sql<{ checked_at: Date }>`
          select checked_at from worker_health where worker_id = 'stack-resetting'
        `.execute(services.db);
        return rows[0] !== undefined && rows[0].checked_at.getTime() > downSince + 4_000;
      },
      600_000,
      100,
    );
    expect(
      (await attemptsOf(runId, POSTER_TASK)).map((attempt) => [attempt.attempt, attempt.status]),
    ).toEqual([[1, 'running']]);

    await fakes.bytebotd.revive();
    await writeFile(release, '');
    expect(await settledTask(runId, POSTER_TASK)).toMatchObject({
      status: 'success',
      attempts: 1,
    });
    expect(await grades().gradesOfTask(runId, POSTER_TASK)).toMatchObject([{ score: 1 }]);
    expect(await stopWorker(worker)).toBe(0);
  });
});

describe("a graded worker's LLM relay while its attempt resets and sets up", () => {
  it("forwards only the attempt's own Bytebot task: one created beside the fleet is refused, never sent or billed, and counted", async () => {
    const model = 'fake-relay-model';
    const freePort = async () => {
      const server = createServer();
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      const { port } = server.address() as { port: number };
      await new Promise((resolve) => server.close(resolve));
      return port;
    };
    const [relayPort, metricsPort] = [await freePort(), await freePort()];
    const llm = await startFakeLlm({
      models: [model],
      script: (request) => ({
        content: `Looking at the screen, turn ${request.messages.filter((m) => m.role === 'assistant').length + 1}.`,
        promptTokens: 1000,
        completionTokens: 100,
      }),
    });
    const stack = await startFakeGradedStack({
      scenario: completes({ 2: RESTORE_POSTER }),
      vm: { apps: ['code', 'firefox', 'thunar'] },
      web: fakes.web,
      bytebot: { llmProxyUrl: `http://127.0.0.1:${relayPort}` },
    });
    try {
      const marker = path.join(scratchDir, 'relay-resetting');
      const release = path.join(scratchDir, 'relay-reset-may-finish');
      const resetCommand = `touch '${marker}'; while [ ! -e '${release}' ]; do sleep 0.05; done; rm -f '${marker}' '${release}'; ${stack.resetCommand}`;
      const args = gradedWorkerArgs(stack, 'stack-relayed');
      args[args.indexOf('--reset-command') + 1] = resetCommand;
      const worker = startWorker(args, {
        LLM_BASE_URL: llm.baseUrl,
        LLM_API_KEY: 'sk-graded-relay-test',
        BENCHFLEET_LLM_RELAY_MODELS: model,
        BENCHFLEET_LLM_RELAY_PORT: String(relayPort),
        BENCHFLEET_METRICS_PORT: String(metricsPort),
        LLM_PRICE_TABLE: JSON.stringify({ [model]: FAKE_LLM_PRICE }),
      });
      await waitForOutput(worker, 'worker ready', 'the worker to be ready');
      const posterTask = await osworldExampleTask('os', POSTER_TASK);
      const runId = await enqueueTasks([posterTask]);
      await waitFor('the reset to start', async () => existsSync(marker), 600_000, 20);

      // While the attempt's reset runs, someone creates a Bytebot task on the stack beside the fleet.
      const created = await fetch(`${stack.bytebot.url}/tasks`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          description: 'Order a pizza for the office',
          model: { provider: 'proxy', name: model, title: model },
        }),
      });
      const foreignId = ((await created.json()) as { id: string }).id;
      const foreign = await waitFor(
        'the foreign task to end',
        async () => {
          const row = stack.bytebot.tasks().find((task) => task.id === foreignId);
          return row && ['COMPLETED', 'FAILED'].includes(row.status) ? row : undefined;
        },
        600_000,
        20,
      );
      expect(foreign.status).toBe('FAILED');
      // Its call was refused (the agent's client told not to retry it) and never reached the provider.
      expect(stack.bytebot.llmCalls(foreignId).map((call) => [call.status, call.requests])).toEqual(
        [[403, 1]],
      );
      expect(stack.bytebot.llmCalls(foreignId)[0]!.answer).toMatchObject({
        error: { type: 'permission_error' },
      });
      expect(llm.stats.requests).toBe(0);

      await writeFile(release, '');
      const task = await settledTask(runId, POSTER_TASK);
      expect(task).toMatchObject({ status: 'success', attempts: 1, tokens_in: 4 * 1000 });
      expect(await grades().gradesOfTask(runId, POSTER_TASK)).toMatchObject([{ score: 1 }]);
      // Every call the provider got is the attempt's own task's: its description opens each.
      expect(llm.received).toHaveLength(4);
      for (const request of llm.received)
        expect(String(request.messages.find((m) => m.role === 'user')?.content).trim()).toBe(
          posterTask.instruction.trim(),
        );
      await waitForOutput(
        worker,
        /"refusedForeignCalls":1.*refused an LLM call from the stack's agent: not the running attempt's Bytebot task/,
        'the refusal to be counted',
      );
      const metrics = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
      expect(metrics).toMatch(/^benchfleet_llm_relay_refused_foreign_task\{[^}]*\} 1$/m);
      expect(await stopWorker(worker)).toBe(0);
    } finally {
      await stack.close();
      await llm.close();
    }
  });
});

describe('worker-osworld, graded runs: the desktop says what it has (its manifest)', () => {
  const manifestFile = fileURLToPath(
    new URL(
      '../../../libs/osworld-grading/src/grading-coverage/fixtures/desktop-manifest.fixture.json',
      import.meta.url,
    ),
  );
  /** The poster task, its setup opening a GNOME Terminal first (as multi_apps/510f64c8's does). */
  const posterWithTerminal = async (): Promise<OsworldTask> => {
    const task = await osworldExampleTask('os', POSTER_TASK);
    const terminal = {
      type: 'execute',
      parameters: { command: 'gnome-terminal --maximize', shell: true },
    } as unknown as OsworldTask['config'][number];
    return { ...task, config: [terminal, ...task.config] };
  };

  it('auto: the manifest read after the reset has gnome-terminal, so setup runs it as written and the grade says so; --desktop stock applies the stand-in', async () => {
    const stack = await startFakeGradedStack({
      scenario: completes({ 2: RESTORE_POSTER }),
      vm: { apps: ['gnome-terminal', 'xfce4-terminal'], mounts: ['/usr/share'] },
    });
    stack.web.serve(POSTER_URL, 'RIFF....WEBPVP8 poster');
    await stack.vm.writeFile(
      '/usr/share/benchfleet-desktop.json',
      await readFile(manifestFile, 'utf8'),
    );
    const runOn = async (stackId: string, extraArgs: string[]) => {
      const worker = startWorker([...gradedWorkerArgs(stack, stackId), ...extraArgs]);
      try {
        await waitForOutput(worker, 'worker ready', 'the graded worker to be ready');
        const runId = await enqueueTasks([await posterWithTerminal()]);
        expect(await settledTask(runId, POSTER_TASK)).toMatchObject({ status: 'success' });
        const [grade] = await grades().gradesOfTask(runId, POSTER_TASK);
        return grade!;
      } finally {
        expect(await stopWorker(worker)).toBe(0);
      }
    };
    try {
      const fromManifest = await runOn('stack-manifest', []);
      expect(fromManifest).toMatchObject({ score: 1, fidelity: 'graded', substitutions: [] });
      expect(fromManifest.setup).toMatchObject({
        desktop: { kind: 'manifest', base: expect.any(String) },
      });
      expect(await stack.vm.appRuns()).toEqual([['gnome-terminal', '--maximize']]);

      const stock = await runOn('stack-stock', ['--desktop', 'stock']);
      expect(stock).toMatchObject({
        score: 1,
        fidelity: 'degraded',
        substitutions: ['xfce4-terminal-for-gnome-terminal'],
      });
      expect(stock.setup).toMatchObject({ desktop: { kind: 'stock', why: '--desktop stock' } });
      expect((await stack.vm.appRuns()).at(-1)).toEqual(['xfce4-terminal', '--maximize']);
    } finally {
      await producer.queue('osworld').obliterate({ force: true });
      await stack.close();
    }
  });
});

describe('worker-osworld without --desktop-server-url', () => {
  it('a graded run’s task runs and is recorded ungraded, saying why (never the agent’s word as a grade)', async () => {
    const stack = await startFakeGradedStack({ scenario: completes() });
    try {
      const worker = startWorker([
        '--bytebot-url',
        stack.bytebot.url,
        '--stack-id',
        'stack-plain',
        '--grace-s',
        '5',
      ]);
      await waitForOutput(worker, 'worker ready', 'the worker to be ready');
      const runId = await enqueueTasks([await osworldExampleTask('os', POSTER_TASK)]);
      expect(await settledTask(runId, POSTER_TASK)).toMatchObject({ status: 'success' });
      expect(await grades().gradesOfTask(runId, POSTER_TASK)).toMatchObject([
        {
          attempt: 1,
          fidelity: 'ungraded',
          fidelity_reason: NO_DESKTOP_SERVER_REASON,
          score: null,
          no_score_cause: 'ungraded',
          final_signal: 'DONE',
        },
      ]);
      expect(stack.vm.requests).toEqual([]);
      expect(await stopWorker(worker)).toBe(0);
    } finally {
      await stack.close();
    }
  });
});

describe('worker-osworld refuses bad grading flags', () => {
  it.each([
    [
      ['--screen-size', '1280by960'],
      /--screen-size \(or OSWORLD_SCREEN_SIZE\): expected WIDTHxHEIGHT/,
    ],
    [
      ['--desktop-server-url', 'ftp://desktop:5000'],
      /--desktop-server-url \(or OSWORLD_DESKTOP_SERVER_URL\): must be an http\(s\) URL/,
    ],
    [
      ['--desktop-server-url', 'http://desktop:5000'],
      /--desktop-server-url \(or OSWORLD_DESKTOP_SERVER_URL\): needs --desktop-url/,
    ],
    [['--reset-command', ' '], /--reset-command \(or OSWORLD_RESET_COMMAND\): must not be empty/],
    [['--desktop', 'gnome'], /--desktop \(or OSWORLD_DESKTOP\): expected auto, stock or manifest/],
    [
      ['--chrome-cdp-url', 'ws://desktop:9222'],
      /--chrome-cdp-url \(or OSWORLD_CHROME_CDP_URL\): must be an http\(s\) URL/,
    ],
    [
      ['--download-mirrors', 'https://a=ftp://b'],
      /--download-mirrors \(or OSWORLD_DOWNLOAD_MIRRORS\): "https:\/\/a=ftp:\/\/b" is not a mirror/,
    ],
    [
      ['--llm-base-url', 'https://api.example.com/v1'],
      /--llm-relay-models \(or BENCHFLEET_LLM_RELAY_MODELS\): is needed with --llm-base-url/,
    ],
    [
      ['--llm-relay-port', '70000'],
      /--llm-relay-port \(or BENCHFLEET_LLM_RELAY_PORT\): expected a port/,
    ],
  ])('%j: one line naming the flag, exit 2', async (flags, message) => {
    const result = await runCli(
      'worker-osworld',
      ['--bytebot-url', 'http://127.0.0.1:9', ...flags],
      { ...services.env, BENCHFLEET_ARTIFACTS: artifactsDir },
    );
    expect(result.code).toBe(2);
    expect(result.stderr.trim().split('\n')).toHaveLength(1);
    expect(result.stderr).toMatch(message);
  });
});

// Last: its final test leaves the shared fake VM server dead.
describe('worker-osworld, graded runs: infra faults of the stack are retried, never scored', () => {
  let worker: StartedProcess;
  let resetFlag: string;

  beforeAll(async () => {
    resetFlag = path.join(scratchDir, 'reset-fails');
    // While the flag file exists, the reset fails (once: it removes the flag as it fails).
    const resetCommand = `if [ -e '${resetFlag}' ]; then rm -f '${resetFlag}'; echo 'Error response from daemon: container is restarting' >&2; exit 1; fi; ${fakes.resetCommand}`;
    const args = gradedWorkerArgs(fakes, 'stack-faults');
    args[args.indexOf('--reset-command') + 1] = resetCommand;
    worker = startWorker(args);
    await waitForOutput(worker, 'worker ready', 'the worker to be ready');
  });

  afterAll(async () => {
    expect(await stopWorker(worker)).toBe(0);
  });

  afterEach(async () => {
    await producer.queue('osworld').obliterate({ force: true });
  });

  it("a reset that fails: the attempt is the stack's infra fault, nothing is set up, the retry is graded", async () => {
    await writeFile(resetFlag, '');
    fakes.setScenario(completes({ 2: RESTORE_POSTER }));
    const created = fakes.bytebot.stats.createdTasks;
    const runId = await enqueueTasks([await osworldExampleTask('os', POSTER_TASK)]);
    const first = await failedFirstAttempt(runId, POSTER_TASK);
    expect(first).toMatchObject({ error_class: 'infra' });
    expect(first.error).toContain(
      "the stack's reset command exited with code 1: Error response from daemon: container is restarting",
    );
    expect(fakes.bytebot.stats.createdTasks).toBe(created);
    expect(await grades().gradesOfTask(runId, POSTER_TASK)).toEqual([]);

    await promoteRetry(runId, POSTER_TASK);
    expect(await settledTask(runId, POSTER_TASK)).toMatchObject({ status: 'success', attempts: 2 });
    expect(await grades().gradesOfTask(runId, POSTER_TASK)).toMatchObject([
      { attempt: 2, score: 1 },
    ]);
  });

  it('a setup download that fails: infra, the agent never starts, no grade', async () => {
    fakes.web.failNext(`${CALCULATOR_BASE}calculator.zip`, 3, 502);
    fakes.setScenario(completes());
    const created = fakes.bytebot.stats.createdTasks;
    const runId = await enqueueTasks([await osworldExampleTask('multi_apps', CALCULATOR_TASK)]);
    const first = await failedFirstAttempt(runId, CALCULATOR_TASK);
    expect(first).toMatchObject({ error_class: 'infra' });
    expect(first.error).toMatch(
      /^Setup step 1 failed: _download_setup - download of .*calculator\.zip failed: HTTP 502$/,
    );
    expect(fakes.bytebot.stats.createdTasks).toBe(created);
    expect(await grades().gradesOfTask(runId, CALCULATOR_TASK)).toEqual([]);
    // Still open: the job waits out its backoff to be tried again.
    const job = await producer.queue('osworld').getJob(taskJobId(runId, CALCULATOR_TASK));
    await waitFor(
      'the retry to be scheduled',
      async () => (await job!.getState()) === 'delayed',
      600_000,
      50,
    );
  });

  it('the VM server dying mid-evaluation: infra with the agent’s word in the attempt’s error, no score', async () => {
    fakes.setScenario(completes({ 3: 'cd ~/Desktop && python3 calculator.py > log.txt' }));
    // Setup downloads, uploads and runs a command; only the evaluation's getter reads a file.
    fakes.vm.dieOn('file');
    const runId = await enqueueTasks([await osworldExampleTask('multi_apps', CALCULATOR_TASK)]);
    const first = await failedFirstAttempt(runId, CALCULATOR_TASK);
    expect(first).toMatchObject({ error_class: 'infra' });
    expect(first.error).toMatch(
      /^grading failed after the agent ended \(COMPLETED, 4 step\(s\)\); not scored: OSWorld VM server: POST \/file got no answer/,
    );
    expect(await grades().gradesOfTask(runId, CALCULATOR_TASK)).toEqual([]);
    const task = await services.db
      .selectFrom('tasks')
      .selectAll()
      .where('run_id', '=', runId)
      .executeTakeFirstOrThrow();
    expect(task).toMatchObject({ status: 'running', success: null });
  });
});
