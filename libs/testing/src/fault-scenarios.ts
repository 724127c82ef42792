import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { FaultFleet, type RunVerdict } from './fault-fleet.js';
import { startFakeBytebot, type FakeBytebot } from './fake-bytebot/index.js';
import { osworldTestTask, writeOsworldTestDataset } from './fake-bytebot/osworld-test-dataset.js';
import { withFakeScenario } from './fake-bytebot/fake-bytebot-scenarios.js';
import { waitFor } from './process-harness.js';

// The faults of a week-long run, each done to a fleet of real processes on servers of its own
// (FaultFleet), each ending when the fleet has converged by itself: the fault suite asserts on
// these results and bench/faults.ts prints them.

export interface FaultResult extends RunVerdict {
  fault: string;
  /** From the end of the fault to every task settled and the run summarised. */
  seconds: number;
  /** What else the scenario checked, for its test to assert and the bench to show. */
  checks: Record<string, unknown>;
}

const RUNTIME_TEST_WORKER = fileURLToPath(
  new URL('../../runs/test-support/worker-runtime-process.ts', import.meta.url),
);

/** Where the scenarios run: this checkout by default, or another's CLIs (`codeDir`) for a baseline. */
export interface ScenarioOptions {
  codeDir?: string;
  /** How long the fleet may take to converge after the fault (default 180 s); then it has not. */
  convergeTimeoutMs?: number;
}

let scenarioOptions: ScenarioOptions = {};

/** Sets where the next scenarios run (the bench's `--baseline`). */
export function useScenarioOptions(options: ScenarioOptions): void {
  scenarioOptions = options;
}

/** The verdict once the fleet has converged, or when it has not within the time allowed (seconds NaN). */
async function finish(
  fleet: FaultFleet,
  fault: string,
  runId: string,
  checks: Record<string, unknown> = {},
): Promise<FaultResult> {
  let seconds = Number.NaN;
  try {
    seconds = await fleet.converge(runId, scenarioOptions.convergeTimeoutMs ?? 180_000);
  } catch {
    // Not converged: the verdict says what is stuck.
  }
  return {
    fault,
    seconds,
    ...(await fleet.verdict(runId)),
    checks: { ...checks, processesAlive: fleet.alive().length },
  };
}

/** For scenarios kept in other files: the verdict once the fleet has converged (see `finish`). */
export { finish as finishFault, withFleet as withFaultFleet };

async function withFleet<T>(
  options: Parameters<typeof FaultFleet.start>[0],
  body: (fleet: FaultFleet) => Promise<T>,
): Promise<T> {
  const fleet = await FaultFleet.start({
    ...options,
    ...(scenarioOptions.codeDir ? { codeDir: scenarioOptions.codeDir } : {}),
  });
  try {
    return await body(fleet);
  } finally {
    await fleet.stop();
  }
}

/** A WebShop worker killed with SIGKILL mid-run: its jobs stall and the other worker runs them. */
export function killWebshopWorker(): Promise<FaultResult> {
  return withFleet({}, async (fleet) => {
    await fleet.startKeeper();
    const [doomed] = await Promise.all([
      fleet.startWebshopWorker('webshop-doomed'),
      fleet.startWebshopWorker('webshop-survivor'),
    ]);
    const runId = await fleet.enqueueWebshop('0-199');
    await fleet.waitForSettled(runId, 40);
    doomed!.child.kill('SIGKILL');
    await doomed!.exited;
    return finish(fleet, 'kill -9 a WebShop worker', runId);
  });
}

/** Postgres stopped for `outageMs` under a running fleet, then started again. */
export function restartPostgres(outageMs: number): Promise<FaultResult> {
  // No worker dies here, so nothing needs the fast stall check. With 1 s locks a live worker starved
  // of CPU (load 25-44) loses the locks of jobs it runs, and BullMQ fails a job at its 4th stall: a
  // task lost by the test's settings, not by the restart (the likely cause of a `lost: 1` seen once).
  return withFleet({ productionLocks: true }, async (fleet) => {
    await fleet.startKeeper();
    const workers = await Promise.all([
      fleet.startWebshopWorker('webshop-a'),
      fleet.startWebshopWorker('webshop-b'),
    ]);
    const runId = await fleet.enqueueWebshop('0-399');
    await fleet.waitForSettled(runId, 50);
    await fleet.postgres.stop();
    await new Promise((resolve) => setTimeout(resolve, outageMs));
    await fleet.postgres.start();
    const paused = workers.filter((worker) =>
      /paused: Postgres at .* does not answer/.test(worker.output()),
    ).length;
    return finish(fleet, `restart Postgres (${Math.round(outageMs / 1000)} s down)`, runId, {
      workersThatPaused: paused,
      workersAlive: workers.filter((w) => w.child.exitCode === null).length,
    });
  });
}

/** Redis restarted under a running fleet: without persistence every job is gone; with it, none. */
export function restartRedis(appendOnly: boolean): Promise<FaultResult> {
  return withFleet({ redisAppendOnly: appendOnly }, async (fleet) => {
    await fleet.startKeeper();
    const workers = await Promise.all([
      fleet.startWebshopWorker('webshop-a'),
      fleet.startWebshopWorker('webshop-b'),
    ]);
    const runId = await fleet.enqueueWebshop('0-299');
    await fleet.waitForSettled(runId, 40);
    await fleet.redis.restart();
    return finish(
      fleet,
      `restart Redis (${appendOnly ? 'append-only: data kept' : 'no persistence: all queue data lost'})`,
      runId,
      {
        workersAlive: workers.filter((w) => w.child.exitCode === null).length,
      },
    );
  });
}

function startRuntimeTestWorker(
  fleet: FaultFleet,
  workerId: string,
  jobMs: number,
): Promise<ChildProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', RUNTIME_TEST_WORKER], {
    env: {
      ...fleet.env,
      WORKER_ID: workerId,
      JOB_MS: String(jobMs),
      MAX_STALLED: '0',
      QUEUE: 'webshop',
      JOB_NAME: 'webshop-episode',
      LOG_LEVEL: 'warn',
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  return new Promise((resolve, reject) => {
    child.stdout?.on(
      'data',
      (chunk: Buffer) => chunk.toString().includes('ready') && resolve(child),
    );
    child.once('exit', (code) =>
      reject(new Error(`runtime test worker exited early with ${code}`)),
    );
  });
}

/**
 * The keeper (`scheduler worker`) is down while BullMQ fails a job as lost (its worker died and no
 * stall is allowed): nobody hears the failure. The keeper started again finds it and settles it.
 */
export function keeperDownWhileAJobIsLost(): Promise<FaultResult> {
  return withFleet({}, async (fleet) => {
    const runId = await fleet.enqueueWebshop('0');
    const doomed = await startRuntimeTestWorker(fleet, 'doomed', 60_000);
    await waitFor(
      'the episode to start',
      async () =>
        (await fleet.db
          .selectFrom('steps')
          .select('step')
          .where('run_id', '=', runId)
          .executeTakeFirst()) !== undefined,
      600_000,
    );
    doomed.kill('SIGKILL');
    const checker = await startRuntimeTestWorker(fleet, 'checker', 100);
    try {
      await waitFor(
        'BullMQ to fail the job as lost',
        async () =>
          (await fleet.taskCounts(runId)).open === 1 &&
          (await jobFailedReason(fleet, runId)).includes('stalled more than allowable limit'),
        600_000,
        100,
      );
      await fleet.startKeeper();
      const result = await finish(fleet, 'keeper down while a job fails as lost', runId);
      const task = await fleet.db
        .selectFrom('tasks')
        .select(['status', 'error'])
        .where('run_id', '=', runId)
        .executeTakeFirstOrThrow();
      return { ...result, checks: { ...result.checks, task } };
    } finally {
      checker.kill('SIGKILL');
    }
  });
}

async function jobFailedReason(fleet: FaultFleet, runId: string): Promise<string> {
  const { Queue } = await import('bullmq');
  const { createRedisConnection } = await import('@benchfleet/queue');
  const connection = createRedisConnection(fleet.redis.url, 'producer');
  const queue = new Queue('webshop', { connection, prefix: fleet.prefix });
  try {
    return (await queue.getJob(`${runId}__goal-00000`))?.failedReason ?? '';
  } finally {
    await queue.close();
    connection.disconnect();
  }
}

/** `scheduler resume` three times while the run goes on: no task that has its outcome runs again. */
export function resumesDuringARun(): Promise<FaultResult> {
  return withFleet({ llmLatencyMs: 100 }, async (fleet) => {
    await fleet.startKeeper();
    await Promise.all([
      fleet.startWebshopWorker('webshop-a'),
      fleet.startWebshopWorker('webshop-b'),
    ]);
    const runId = await fleet.enqueueWebshop('0-399');
    const resumes: number[] = [];
    for (const settled of [40, 100, 160]) {
      await fleet.waitForSettled(runId, settled);
      const result = await fleet.scheduler(['resume', runId]);
      if (result.code !== 0) throw new Error(`resume failed: ${result.stderr}`);
      resumes.push(Number(/(\d+) task\(s\) re-enqueued/.exec(result.stderr)?.[1] ?? -1));
    }
    return finish(fleet, 'three resumes during a run', runId, { reEnqueuedByResumes: resumes });
  });
}

/** `scheduler cancel` while episodes run: nothing is written for the run after it. */
export function cancelDuringARun(): Promise<FaultResult> {
  return withFleet({ llmLatencyMs: 80 }, async (fleet) => {
    await fleet.startKeeper();
    await Promise.all([
      fleet.startWebshopWorker('webshop-a'),
      fleet.startWebshopWorker('webshop-b'),
    ]);
    const runId = await fleet.enqueueWebshop('0-299');
    await fleet.waitForSettled(runId, 40);
    const cancel = await fleet.scheduler(['cancel', runId]);
    if (cancel.code !== 0) throw new Error(`cancel failed: ${cancel.stderr}`);
    const atCancel = await writtenFor(fleet, runId);
    // Nothing can be written once no job of the run is active and the LLM holds no request.
    await waitFor(
      'the aborted episodes to end',
      async () => fleet.llm.stats.inFlight === 0 && (await activeJobs(fleet)) === 0,
      600_000,
      50,
    );
    const later = await writtenFor(fleet, runId);
    const result = await finish(fleet, 'cancel during a run', runId);
    return {
      ...result,
      checks: {
        ...result.checks,
        stepsAfterCancel: later.steps - atCancel.steps,
        attemptsAfterCancel: later.attempts - atCancel.attempts,
        runningAttempts: later.running,
      },
    };
  });
}

async function writtenFor(
  fleet: FaultFleet,
  runId: string,
): Promise<{ steps: number; attempts: number; running: number }> {
  const [steps, attempts] = await Promise.all([
    fleet.db
      .selectFrom('steps')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('run_id', '=', runId)
      .executeTakeFirstOrThrow(),
    fleet.db
      .selectFrom('attempts')
      .select((eb) => [
        eb.fn.countAll<number>().as('n'),
        eb.fn.count<number>('attempt').filterWhere('status', '=', 'running').as('running'),
      ])
      .where('run_id', '=', runId)
      .executeTakeFirstOrThrow(),
  ]);
  return {
    steps: Number(steps.n),
    attempts: Number(attempts.n),
    running: Number(attempts.running),
  };
}

async function activeJobs(fleet: FaultFleet): Promise<number> {
  const { Queue } = await import('bullmq');
  const { createRedisConnection } = await import('@benchfleet/queue');
  const connection = createRedisConnection(fleet.redis.url, 'producer');
  const queue = new Queue('webshop', { connection, prefix: fleet.prefix });
  try {
    return (await queue.getJobCounts('active')).active ?? 0;
  } finally {
    await queue.close();
    connection.disconnect();
  }
}

/**
 * An OSWorld worker killed with SIGKILL mid-task: its Bytebot task goes on running on its stack
 * while the task runs again on the other stack. The stack's worker, back, cancels it there before
 * anything else, and the next tasks on that stack run as if nothing had happened; the other stack
 * is never asked to cancel a task it does not have.
 */
export function killOsworldWorker(): Promise<FaultResult> {
  return withFleet({}, async (fleet) => {
    const options = {
      pendingDelayMs: 10,
      stepIntervalMs: 150,
      toolDelayMs: 5,
      scenarios: { steady: { steps: 6, ending: { kind: 'completed' as const, answer: 'Done.' } } },
    };
    // On stack A the first task never ends: left behind, it would run for ever.
    let createdOnA = 0;
    const stacks: FakeBytebot[] = [
      await startFakeBytebot({
        ...options,
        chooseScenario: () => (createdOnA++ === 0 ? 'never-finishes' : undefined),
      }),
      await startFakeBytebot(options),
    ];
    const enqueue = async (name: string, count: number) => {
      const tasks = Array.from({ length: count }, (_, i) =>
        osworldTestTask(`${name}-${i}`, withFakeScenario(`Fault task ${name} ${i}`, 'steady')),
      );
      const enqueued = await fleet.scheduler([
        'enqueue',
        '--dataset',
        await writeOsworldTestDataset(fleet.scratch, name, tasks),
        '--json',
      ]);
      if (enqueued.code !== 0) throw new Error(`enqueue failed: ${enqueued.stderr}`);
      return (JSON.parse(enqueued.stdout) as { runId: string }).runId;
    };
    try {
      await fleet.startKeeper();
      const [workerA, workerB] = await Promise.all([
        fleet.startOsworldWorker('stack-a', stacks[0]!.url),
        fleet.startOsworldWorker('stack-b', stacks[1]!.url),
      ]);
      const runId = await enqueue('fault', 6);
      const orphan = await waitFor('stack A to be two steps into a task', async () => {
        const running = stacks[0]!.tasks().find((task) => task.status === 'RUNNING');
        if (!running) return undefined;
        const steps = await fleet.db
          .selectFrom('steps')
          .select('step')
          .where('run_id', '=', runId)
          .where('external_id', 'is not', null)
          .execute();
        return steps.length >= 2 ? running : undefined;
      });
      const orphanTask = await fleet.db
        .selectFrom('tasks')
        .select('task_id')
        .where('run_id', '=', runId)
        .where('external_id', '=', orphan.id)
        .executeTakeFirstOrThrow();
      workerA!.child.kill('SIGKILL');
      await workerA!.exited;
      // Its task runs again on stack B while stack A's worker is gone.
      await waitFor(
        'the task to settle on stack B',
        async () => {
          const task = await fleet.db
            .selectFrom('tasks')
            .select(['status', 'worker_id'])
            .where('run_id', '=', runId)
            .where('task_id', '=', orphanTask.task_id)
            .executeTakeFirstOrThrow();
          return task.status !== 'running' && task.status !== 'queued' ? task : undefined;
        },
        60_000,
      );
      const orphanStillRunning =
        stacks[0]!.tasks().find((task) => task.id === orphan.id)?.status === 'RUNNING';
      const result = await finish(fleet, 'kill -9 an OSWorld worker mid-task', runId);
      // Stack A's worker back, stack B's stopped: the next tasks run on stack A, after the leftover.
      workerB!.child.kill('SIGTERM');
      await workerB!.exited;
      await fleet.startOsworldWorker('stack-a', stacks[0]!.url);
      const nextRun = await enqueue('next', 2);
      await fleet.converge(nextRun);
      const next = await fleet.db
        .selectFrom('tasks')
        .select(['status', 'worker_id', 'total_steps'])
        .where('run_id', '=', nextRun)
        .execute();
      return {
        ...result,
        checks: {
          ...result.checks,
          orphanStillRunningAfterKill: orphanStillRunning,
          rerunOn: (
            await fleet.db
              .selectFrom('tasks')
              .select('worker_id')
              .where('run_id', '=', runId)
              .where('task_id', '=', orphanTask.task_id)
              .executeTakeFirstOrThrow()
          ).worker_id,
          orphanOnItsStack: stacks[0]!.tasks().find((task) => task.id === orphan.id)?.status,
          cancelsSentToTheOtherStack: stacks[1]!.stats.cancels,
          nextTasksOnStackA: next.map(
            (task) => `${task.status}/${task.worker_id}/${task.total_steps}`,
          ),
          mostRunningAtOnceOnA: stacks[0]!.stats.maxConcurrentRunning,
        },
      };
    } finally {
      for (const stack of stacks) await stack.close();
    }
  });
}
