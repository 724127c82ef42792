import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker } from 'bullmq';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OSWORLD_GRADING_VERSION } from '@benchfleet/osworld-grading';
import { createRedisConnection, JobProducer, WorkerHeartbeat } from '@benchfleet/queue';
import {
  osworldTestTask,
  runCli,
  useTestServices,
  writeOsworldTestDataset,
} from '@benchfleet/testing';

// `scheduler enqueue --benchmark osworld --grade`, run as a user runs it: a graded run records
// that it is one (and which port and final-signal mapping grade it); every refusal is one line,
// exit 2, nothing written.

const services = useTestServices();
const osworldDir = fileURLToPath(
  new URL('../../../../shared/osworld/evaluation_examples', import.meta.url),
);
// A task of the phase-1 graded set.
const PHASE1_VS_CODE = '0ed39f63-6049-43d4-ba4d-5fa2fe04a951';
const MAPPING = 'bytebot-status-to-osworld-final-action/v1';
let scratch: string;
let producer: JobProducer;

beforeAll(async () => {
  scratch = await mkdtemp(join(tmpdir(), 'grade-enqueue-'));
  producer = new JobProducer(services.redisUrl, services.prefix);
});
afterAll(async () => {
  await producer.close();
  await rm(scratch, { recursive: true, force: true });
});

const scheduler = (args: string[]) => runCli('scheduler', args, services.env, 600_000);
const osworld = (...args: string[]) => [
  'enqueue',
  '--benchmark',
  'osworld',
  '--osworld-dir',
  osworldDir,
  '--json',
  ...args,
];

async function written(): Promise<{ runs: number; tasks: number; jobs: number }> {
  const runs = await services.db.selectFrom('runs').select('id').execute();
  const tasks = await services.db.selectFrom('tasks').select('task_id').execute();
  const counts = await producer.counts('osworld');
  return {
    runs: runs.length,
    tasks: tasks.length,
    jobs: Object.values(counts).reduce((a, b) => a + b, 0),
  };
}

async function configOf(runId: string): Promise<Record<string, unknown>> {
  const row = await services.db
    .selectFrom('runs')
    .select('config')
    .where('id', '=', runId)
    .executeTakeFirstOrThrow();
  return row.config as Record<string, unknown>;
}

async function refused(args: string[], says: RegExp): Promise<void> {
  const before = await written();
  const result = await scheduler(args);
  expect(result.code, result.stderr).toBe(2);
  expect(result.stderr.trim().split('\n')).toHaveLength(1);
  expect(result.stderr.trim()).toMatch(says);
  expect(await written()).toEqual(before);
}

describe('scheduler enqueue --grade', () => {
  it('makes a graded run: the config says grade, the grading version and the final-signal mapping', async () => {
    const result = await scheduler(osworld('--domain', 'vs_code', '--grade'));
    expect(result.code, result.stderr).toBe(0);
    const { runId, tasks } = JSON.parse(result.stdout) as { runId: string; tasks: number };
    expect(tasks).toBe(23);
    expect(await configOf(runId)).toMatchObject({
      grade: true,
      grading: { version: OSWORLD_GRADING_VERSION, final_signal_mapping: MAPPING },
      domains: ['vs_code'],
    });
  });

  it('without --grade nothing changes: the same tasks, grade false, no grading recorded', async () => {
    const result = await scheduler(osworld('--domain', 'os'));
    expect(result.code, result.stderr).toBe(0);
    const { runId, tasks } = JSON.parse(result.stdout) as { runId: string; tasks: number };
    expect(tasks).toBe(24);
    const config = await configOf(runId);
    expect(config).toMatchObject({ grade: false, domains: ['os'] });
    expect(config).not.toHaveProperty('grading');
  });

  it('--only-graded-tasks leaves out the tasks outside the graded set (os: 14 of 24)', async () => {
    const result = await scheduler(osworld('--domain', 'os', '--grade', '--only-graded-tasks'));
    expect(result.code, result.stderr).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({ tasks: 14, domains: { os: 14 } });
  });

  it("grades what the port does not cover with OSWorld's own evaluators by default; --grader is recorded", async () => {
    const auto = await scheduler(osworld('--domain', 'os', '--grade'));
    expect(auto.code, auto.stderr).toBe(0);
    const { runId, tasks } = JSON.parse(auto.stdout) as { runId: string; tasks: number };
    expect(tasks).toBe(24);
    expect(await configOf(runId)).toMatchObject({ grade: true, grader: 'auto' });
    const both = await scheduler(osworld('--domain', 'vs_code', '--grade', '--grader', 'both'));
    expect(both.code, both.stderr).toBe(0);
    expect(await configOf((JSON.parse(both.stdout) as { runId: string }).runId)).toMatchObject({
      grade: true,
      grader: 'both',
    });
    await refused(
      osworld('--domain', 'os', '--grader', 'port'),
      /--grader is for graded runs: add --grade, or drop it/,
    );
    await refused(osworld('--domain', 'os', '--grade', '--grader', 'nobody'), /--grader/);
  });

  it('with --grader port, refuses a task outside the graded (phase-1) set, naming it and how to leave it out', async () => {
    await refused(
      osworld('--domain', 'os', '--grade', '--grader', 'port'),
      /^scheduler: --grade: task os\/[0-9a-f-]{36} is outside the graded \(phase-1\) set: .+ \(and 9 more outside it\); add --only-graded-tasks to leave such tasks out \(the graded domains are vs_code, thunderbird, os, multi_apps\)$/,
    );
  });

  it('refuses a task file with an unknown metric or setup step type', async () => {
    const metric = osworldTestTask(PHASE1_VS_CODE, 'Change the setting.', 'vs_code');
    const badMetric = await writeOsworldTestDataset(scratch, 'bad-metric', [
      { ...metric, evaluator: { func: 'check_jsonn', result: { type: 'vm_file' } } },
    ]);
    await refused(
      ['enqueue', '--benchmark', 'osworld', '--dataset', badMetric, '--grade'],
      new RegExp(
        `--grade: task vs_code/${PHASE1_VS_CODE} uses metric 'check_jsonn', which the grading port does not have: fix evaluator.func in the task file, or leave it out of the --dataset`,
      ),
    );
    const badStep = await writeOsworldTestDataset(scratch, 'bad-step', [
      { ...metric, config: [{ type: 'teleport', parameters: {} }] },
    ]);
    await refused(
      ['enqueue', '--benchmark', 'osworld', '--dataset', badStep, '--grade'],
      new RegExp(
        `--grade: task vs_code/${PHASE1_VS_CODE} uses setup step type 'teleport', which is no OSWorld step type: fix its config`,
      ),
    );
  });

  it('refuses --grade for another benchmark, and the grading flags without --grade', async () => {
    await refused(
      ['enqueue', '--benchmark', 'webshop', '--grade'],
      /--grade is a osworld flag; this is a webshop run/,
    );
    await refused(
      osworld('--domain', 'os', '--only-graded-tasks'),
      /--only-graded-tasks is for graded runs: add --grade, or drop it/,
    );
  });

  it('refuses --grade while the live OSWorld workers have no desktop server, unless told to enqueue anyway', async () => {
    const connection = createRedisConnection(services.redisUrl, 'worker');
    // Live workers as the fleet shows them: a BullMQ connection on the queue and a heartbeat.
    const start = async (workerId: string, capabilities: string[]) => {
      const worker = new Worker('osworld', async () => undefined, {
        connection,
        prefix: services.prefix,
        name: workerId,
        autorun: false,
      });
      await worker.waitUntilReady();
      const beat = new WorkerHeartbeat(
        connection,
        services.prefix,
        workerId,
        'osworld',
        capabilities,
      );
      return { worker, beat };
    };
    const plain = await start('stack-plain', []);
    try {
      await expect
        .poll(async () => (await producer.connectedWorkers('osworld')).has('stack-plain'))
        .toBe(true);
      await refused(
        osworld('--domain', 'vs_code', '--grade'),
        /--grade: none of the 1 live OSWorld worker\(s\) \(stack-plain\) can grade: start one with --desktop-server-url URL .*, or add --no-grade-worker-check/,
      );
      const anyway = await scheduler(
        osworld('--domain', 'vs_code', '--grade', '--no-grade-worker-check'),
      );
      expect(anyway.code, anyway.stderr).toBe(0);

      const grader = await start('stack-grader', ['osworld-grade']);
      try {
        await expect
          .poll(async () => (await producer.connectedWorkers('osworld')).has('stack-grader'))
          .toBe(true);
        const graded = await scheduler(osworld('--domain', 'vs_code', '--grade'));
        expect(graded.code, graded.stderr).toBe(0);
      } finally {
        await grader.beat.stop();
        await grader.worker.close();
      }
    } finally {
      await plain.beat.stop();
      await plain.worker.close();
      connection.disconnect();
    }
  });
});
