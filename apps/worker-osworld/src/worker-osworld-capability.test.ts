import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  runCli,
  startCli,
  startFakeGradedStack,
  useTestServices,
  waitFor,
  type FakeGradedStack,
  type StartedProcess,
} from '@benchfleet/testing';

// The whole path of `enqueue --grade`'s worker check with real worker processes: a worker-osworld
// given --desktop-server-url tells `osworld-grade` in its heartbeat (status shows it), one without
// tells nothing, and `scheduler enqueue --grade` refuses while only the latter is live.

const services = useTestServices();
const osworldDir = fileURLToPath(
  new URL('../../../../shared/osworld/evaluation_examples', import.meta.url),
);
let scratch: string;
let stack: FakeGradedStack;
const started: StartedProcess[] = [];

function startWorker(stackId: string, graded: boolean): StartedProcess {
  const worker = startCli(
    'worker-osworld',
    [
      '--bytebot-url',
      stack.bytebot.url,
      '--desktop-url',
      stack.bytebotd.url,
      ...(graded
        ? [
            '--desktop-server-url',
            stack.vm.url,
            '--grading-cache',
            path.join(scratch, `grading-${stackId}`),
          ]
        : []),
      '--stack-id',
      stackId,
      '--grace-s',
      '5',
    ],
    { ...services.env, BENCHFLEET_ARTIFACTS: path.join(scratch, 'artifacts') },
  );
  started.push(worker);
  return worker;
}

async function stop(worker: StartedProcess): Promise<void> {
  if (worker.child.exitCode !== null || worker.child.signalCode !== null) return;
  worker.child.kill('SIGTERM');
  await worker.exited;
}

interface StatusWorker {
  workerId: string;
  state: string;
  capabilities?: string[];
}

/** The OSWorld workers `scheduler status RUN --json` shows, once `expected` are all serving. */
async function liveWorkers(runId: string, expected: string[]): Promise<StatusWorker[]> {
  return waitFor(
    `workers ${expected.join(', ')} to be serving`,
    async () => {
      const status = await runCli('scheduler', ['status', runId, '--json'], services.env);
      const workers = (JSON.parse(status.stdout) as { workers: StatusWorker[] }).workers;
      return expected.every((id) =>
        workers.some((worker) => worker.workerId === id && worker.state === 'serving'),
      )
        ? workers
        : undefined;
    },
    600_000,
    200,
  );
}

beforeAll(async () => {
  scratch = await mkdtemp(path.join(tmpdir(), 'worker-capability-'));
  stack = await startFakeGradedStack({ scenario: { steps: 0, ending: { kind: 'silent' } } });
});
afterAll(async () => {
  for (const worker of started) await stop(worker);
  await stack.close();
  await rm(scratch, { recursive: true, force: true });
});

describe('a worker that can grade says so in its heartbeat', () => {
  it('enqueue --grade is refused while only workers without a desktop server are live, accepted once one with it is', async () => {
    // A run to ask `status` about (and a plain run changes nothing for the workers).
    const plainRun = await runCli(
      'scheduler',
      [
        'enqueue',
        '--benchmark',
        'osworld',
        '--osworld-dir',
        osworldDir,
        '--domain',
        'vs_code',
        '--max-tasks',
        '1',
        '--json',
      ],
      services.env,
    );
    expect(plainRun.code, plainRun.stderr).toBe(0);
    const runId = (JSON.parse(plainRun.stdout) as { runId: string }).runId;

    const plain = startWorker('stack-plain', false);
    const withoutGrader = await liveWorkers(runId, ['stack-plain']);
    expect(withoutGrader.find((w) => w.workerId === 'stack-plain')).not.toHaveProperty(
      'capabilities',
    );
    const refused = await runCli(
      'scheduler',
      [
        'enqueue',
        '--benchmark',
        'osworld',
        '--osworld-dir',
        osworldDir,
        '--domain',
        'vs_code',
        '--grade',
      ],
      services.env,
    );
    expect(refused.code).toBe(2);
    expect(refused.stderr.trim()).toMatch(
      /--grade: none of the 1 live OSWorld worker\(s\) \(stack-plain\) can grade: start one with --desktop-server-url URL/,
    );
    await stop(plain);

    startWorker('stack-grader', true);
    const withGrader = await liveWorkers(runId, ['stack-grader']);
    expect(withGrader.find((w) => w.workerId === 'stack-grader')?.capabilities).toEqual([
      'osworld-grade',
    ]);
    // Planned only (--max-tasks 1 and the grader is live): accepted.
    const accepted = await runCli(
      'scheduler',
      [
        'enqueue',
        '--benchmark',
        'osworld',
        '--osworld-dir',
        osworldDir,
        '--domain',
        'vs_code',
        '--grade',
        '--max-tasks',
        '1',
        '--json',
      ],
      services.env,
    );
    expect(accepted.code, accepted.stderr).toBe(0);
  });
});
