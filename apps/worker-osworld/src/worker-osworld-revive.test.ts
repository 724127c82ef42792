import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import { createServer as createNetServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { JobProducer } from '@benchfleet/queue';
import {
  enqueueTestRun,
  osworldTestTask,
  runCli,
  startCli,
  startFakeBytebot,
  startFakeBytebotDesktop,
  useTestServices,
  waitFor,
  waitForOutput,
  writeOsworldTestDataset,
  type FakeBytebot,
  type FakeBytebotDesktop,
  type FakeBytebotOptions,
  type StartedProcess,
} from '@benchfleet/testing';

// A stack whose desktop dies, or is down when its worker starts: the worker recreates it with its
// `--reset-command` (here a command that really brings the fake bytebotd back, as recreating the
// desktop's container would), a bounded number of tries, and says its stack is broken when the
// command never brings it back; its tasks then run on other stacks. Real worker processes, real
// Postgres and Redis.

const services = useTestServices();
let producer: JobProducer;
let scratchDir: string;
const workers: StartedProcess[] = [];
const closers: (() => Promise<void>)[] = [];

beforeAll(async () => {
  producer = new JobProducer(services.redisUrl, services.prefix);
  scratchDir = await mkdtemp(path.join(tmpdir(), 'worker-osworld-revive-'));
});

afterEach(async () => {
  for (const worker of workers.splice(0))
    if (worker.child.exitCode === null && worker.child.signalCode === null) {
      worker.child.kill('SIGTERM');
      await worker.exited;
    }
  for (const close of closers.splice(0)) await close();
  await producer.queue('osworld').obliterate({ force: true });
});

afterAll(async () => {
  await producer.close();
  await rm(scratchDir, { recursive: true, force: true });
});

interface Stack {
  readonly desktop: FakeBytebotDesktop;
  readonly bytebot: FakeBytebot;
}

async function startStack(chooseScenario?: FakeBytebotOptions['chooseScenario']): Promise<Stack> {
  const desktop = await startFakeBytebotDesktop();
  const bytebot = await startFakeBytebot({
    pendingDelayMs: 10,
    stepIntervalMs: 20,
    toolDelayMs: 5,
    desktop,
    defaultScenario: { steps: 3, ending: { kind: 'completed', answer: 'Done.' } },
    ...(chooseScenario ? { chooseScenario } : {}),
  });
  closers.push(async () => {
    await bytebot.close();
    await desktop.close();
  });
  return { desktop, bytebot };
}

/** A reset command that brings the fake desktop back (an HTTP call to the test, as `docker start` would be), counting its runs. */
async function revivingResetCommand(
  desktop: FakeBytebotDesktop,
): Promise<{ command: string; runs: () => number }> {
  let runs = 0;
  const server: Server = createServer((_request, response) => {
    runs += 1;
    desktop.revive().then(
      () => response.end('revived\n'),
      (error: unknown) => response.writeHead(500).end(String(error)),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  closers.push(() => new Promise((resolve) => server.close(() => resolve())));
  const { port } = server.address() as { port: number };
  const script = `fetch('http://127.0.0.1:${port}/',{method:'POST'}).then(r=>process.exit(r.ok?0:1),()=>process.exit(1))`;
  return { command: `'${process.execPath}' -e "${script}"`, runs: () => runs };
}

async function freePort(): Promise<number> {
  const server = createNetServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

function startWorker(stack: Stack, stackId: string, extra: string[], metricsPort = 0) {
  const worker = startCli(
    'worker-osworld',
    [
      '--bytebot-url',
      stack.bytebot.url,
      '--desktop-url',
      stack.desktop.url,
      '--stack-id',
      stackId,
      '--grace-s',
      '5',
      ...extra,
    ],
    {
      ...services.env,
      BENCHFLEET_ARTIFACTS: path.join(scratchDir, 'artifacts'),
      // Checks every 0.5 s, so that three failed ones come soon.
      BENCHFLEET_HANDBACK_S: '3',
      BENCHFLEET_METRICS_PORT: String(metricsPort),
      OSWORLD_RESET_BACKOFF_MS: '200',
      LOG_LEVEL: 'info',
    },
  );
  workers.push(worker);
  return worker;
}

async function runOneTask(name: string) {
  const dataset = await writeOsworldTestDataset(scratchDir, name, [
    osworldTestTask(name, 'Open the calculator'),
  ]);
  const runId = await enqueueTestRun(
    { db: services.db, producer },
    { benchmark: 'osworld', flags: { dataset } },
  );
  return { runId, taskId: name };
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

describe("a dead desktop is recreated by its stack's worker", () => {
  it('down at start, and dead again later: the worker runs --reset-command, the desktop is back, tasks run', async () => {
    const stack = await startStack();
    const reset = await revivingResetCommand(stack.desktop);
    await stack.desktop.kill();
    const worker = startWorker(stack, 'stack-revived', ['--reset-command', reset.command]);
    await waitForOutput(
      worker,
      new RegExp(
        `the Bytebot desktop at ${stack.desktop.url} does not answer.*: recreating it with --reset-command \\(try 1 of 3\\)`,
      ),
      "the worker to recreate its stack's desktop",
    );
    await waitForOutput(worker, 'health check passed: resuming', 'the worker to resume');
    expect(stack.desktop.alive).toBe(true);
    expect(reset.runs()).toBe(1);
    const first = await runOneTask('os-after-revival');
    expect(await settledTask(first.runId, first.taskId)).toMatchObject({
      status: 'success',
      attempts: 1,
      worker_id: 'stack-revived',
    });

    // It dies again while the worker waits for work: recreated again, with its tries afresh.
    await stack.desktop.kill();
    await waitFor('the second reset', async () => reset.runs() === 2, 600_000, 50);
    await waitFor('the desktop to be back', async () => stack.desktop.alive, 600_000, 50);
    const second = await runOneTask('os-after-second-revival');
    expect(await settledTask(second.runId, second.taskId)).toMatchObject({
      status: 'success',
      worker_id: 'stack-revived',
    });
  });

  it("dead mid-task: the attempt is the stack's fault (handed back, not scored), the desktop is recreated, and the task runs again on it", async () => {
    let creates = 0;
    // The first run of the task kills the desktop after two steps; the next completes.
    const stack = await startStack(() => (creates++ === 0 ? 'desktop-dies' : undefined));
    const reset = await revivingResetCommand(stack.desktop);
    const worker = startWorker(stack, 'stack-dies-mid-task', ['--reset-command', reset.command]);
    await waitForOutput(worker, 'worker ready', 'the worker to be ready');
    const { runId, taskId } = await runOneTask('os-desktop-dies');
    const task = await settledTask(runId, taskId);
    expect(task).toMatchObject({
      status: 'success',
      attempts: 2,
      worker_id: 'stack-dies-mid-task',
    });
    const attempts = await services.db
      .selectFrom('attempts')
      .select(['attempt', 'status', 'error_class', 'error'])
      .where('run_id', '=', runId)
      .orderBy('attempt')
      .execute();
    expect(attempts.map((a) => [a.attempt, a.status, a.error_class])).toEqual([
      [1, 'error', 'infra'],
      [2, 'success', null],
    ]);
    expect(attempts[0]!.error).toMatch(/desktop/);
    expect(reset.runs()).toBe(1);
  });

  it('a reset that never brings it back: after 3 tries the stack says it is broken, takes no task, and its tasks run on another stack', async () => {
    const broken = await startStack();
    await broken.desktop.kill();
    const metricsPort = await freePort();
    const failing = `echo 'Error response from daemon: container is restarting' >&2; exit 1`;
    const worker = startWorker(broken, 'stack-broken', ['--reset-command', failing], metricsPort);
    await waitForOutput(
      worker,
      /stack broken: its desktop did not come back after 3 tries of --reset-command/,
      'the stack to say it is broken',
      120_000,
    );
    const tries = [
      ...worker
        .output()
        .matchAll(/the stack's desktop is down: .*?with --reset-command \(try (\d) of 3\)/g),
    ].map((match) => match[1]);
    expect(tries).toEqual(['1', '2', '3']);
    // Said on /healthz and in `scheduler status`, with the reason.
    const health = await waitFor(
      '/healthz to say the stack is broken',
      async () => {
        const answer = await fetch(`http://127.0.0.1:${metricsPort}/healthz`);
        const text = await answer.text();
        return text.includes('stack broken') ? { status: answer.status, text } : undefined;
      },
      600_000,
      100,
    );
    expect(health.status).toBe(503);
    expect(health.text).toMatch(
      /^paused: stack broken: its desktop did not come back after 3 tries of --reset-command \(the last: the stack's reset command exited with code 1: Error response from daemon: container is restarting\)/,
    );
    const { runId, taskId } = await runOneTask('os-not-on-a-broken-stack');
    const status = await runCli('scheduler', ['status', runId, '--json'], services.env);
    const snapshot = JSON.parse(status.stdout) as {
      workers: { workerId: string; state: string; reason: string | null }[];
      notes: string[];
    };
    expect(snapshot.workers).toMatchObject([
      {
        workerId: 'stack-broken',
        state: 'paused',
        reason: expect.stringMatching(/^stack broken: /),
      },
    ]);
    expect(snapshot.notes.join('\n')).toMatch(
      /worker stack-broken is paused since .*: stack broken: /,
    );

    // Its task is not taken there; another stack runs it, and nothing is scored on the broken one.
    const healthy = await startStack();
    startWorker(healthy, 'stack-healthy', []);
    expect(await settledTask(runId, taskId)).toMatchObject({
      status: 'success',
      attempts: 1,
      worker_id: 'stack-healthy',
    });
    const attempts = await services.db
      .selectFrom('attempts')
      .select('worker_id')
      .where('run_id', '=', runId)
      .execute();
    expect(attempts).toEqual([{ worker_id: 'stack-healthy' }]);
  });
});
