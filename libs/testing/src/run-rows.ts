import { readRunSummary, type RunSummary } from '@benchfleet/benchmark-kit';
import { TasksRepository, type Database, type Task } from '@benchfleet/db';
import {
  killLeftoverProcesses,
  runCli,
  startCli,
  type CliResult,
  waitFor,
  type CliName,
  type StartedProcess,
} from './process-harness.js';
import type { TestServices } from './test-services.js';

// What the end-to-end tests of runs (epochs, lifecycle, exports, the third benchmark) read back
// and start, in one place: a run's task rows, the wait until they have all settled, the summary
// the aggregate wrote, and the CLIs a test file starts and ends after each test.

const SETTLED = new Set(['success', 'failed', 'cancelled', 'error']);

/** A test file's reading of its runs' rows (its services are read when used: `beforeAll` fills them). */
export class RunRows {
  constructor(private readonly services: Pick<TestServices, 'db'>) {}

  private get db(): Database {
    return this.services.db;
  }

  /** The run's task rows in enqueue order. */
  tasksOf(runId: string): Promise<Task[]> {
    return new TasksRepository(this.db).listByRun(runId);
  }

  /** The run's task rows once none is queued or running. */
  settled(runId: string, timeoutMs?: number): Promise<Task[]> {
    return waitFor(
      `run ${runId} to settle`,
      async () => {
        const tasks = await this.tasksOf(runId);
        return tasks.every((task) => SETTLED.has(task.status)) ? tasks : undefined;
      },
      timeoutMs,
    );
  }

  /** The summary the aggregate wrote, once it counts no pending task, and the run's status then. */
  finishedRun(runId: string): Promise<{ summary: RunSummary; status: string }> {
    return waitFor(`the summary of ${runId}`, async () => {
      const run = await this.db
        .selectFrom('runs')
        .select(['summary', 'status'])
        .where('id', '=', runId)
        .executeTakeFirst();
      const summary = readRunSummary(run?.summary);
      return run && summary?.pending === 0 ? { summary, status: run.status } : undefined;
    });
  }

  /** The summary the aggregate wrote, once it counts no pending task. */
  async storedSummary(runId: string): Promise<RunSummary> {
    return (await this.finishedRun(runId)).summary;
  }
}

/**
 * The CLIs a test file runs on its services' environment: `scheduler` commands, and processes
 * started with `started` added to it (e.g. a log level), ended by `killLeftovers` in `afterEach`.
 */
export class TestClis {
  private readonly started: StartedProcess[] = [];

  constructor(
    private readonly services: Pick<TestServices, 'env'>,
    private readonly startedEnv: NodeJS.ProcessEnv = {},
  ) {}

  private get env(): NodeJS.ProcessEnv {
    return this.services.env;
  }

  scheduler(args: string[], timeoutMs?: number): Promise<CliResult> {
    return runCli('scheduler', args, this.env, timeoutMs);
  }

  /** `scheduler enqueue … --json`: the new run's id; an error with what it printed when it failed. */
  async enqueue(args: string[]): Promise<string> {
    const result = await this.scheduler(['enqueue', ...args, '--json']);
    if (result.code !== 0)
      throw new Error(`scheduler enqueue exited ${result.code}: ${result.stderr}`);
    return (JSON.parse(result.stdout) as { runId: string }).runId;
  }

  start(name: CliName, args: string[], env: NodeJS.ProcessEnv = {}): StartedProcess {
    const process = startCli(name, args, { ...this.env, ...this.startedEnv, ...env });
    this.started.push(process);
    return process;
  }

  /** Keeps a process started otherwise, to be ended with the rest. */
  adopt(process: StartedProcess): StartedProcess {
    this.started.push(process);
    return process;
  }

  killLeftovers(): Promise<void> {
    return killLeftoverProcesses(this.started);
  }
}
