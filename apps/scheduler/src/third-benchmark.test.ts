import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { parse, parseAllDocuments } from 'yaml';
import { benchmarks } from '@benchfleet/benchmarks';
import { JobProducer } from '@benchfleet/queue';
import {
  cliBin,
  killLeftoverProcesses,
  runCli,
  RunRows,
  startCli,
  useTestServices,
  waitFor,
  waitForWorkerReady,
  type StartedProcess,
} from '@benchfleet/testing';
import { workspaceApp } from '../../../workspace-apps.mjs';
import { benchmarkPackages, renderBenchmarkEntries } from '../../../benchmark-entries.mjs';
import { COMPOSE_BEGIN, COMPOSE_END } from '../../../deploy/worker-manifests.mjs';

// The proof that a benchmark is one slice: the echo example (examples/echo-benchmark, a lib and a
// worker app) is named by its own folder and nothing else a person writes (its package.json
// registers it: `benchfleet.benchmark`); with that it gets everything the fleet gives a benchmark: enqueue by its own flags, a
// compiled worker bin, steps, a summary with its own label and scores, status, its tools, cancel,
// resume, export, the dashboard, and a place in the deploy manifests.

const REPO_DIR = fileURLToPath(new URL('../../..', import.meta.url));
const services = useTestServices();
const runRows = new RunRows(services);
const processes: StartedProcess[] = [];
let producer: JobProducer;
let scratch: string;

const scheduler = (args: string[]) => runCli('scheduler', args, services.env, 600_000);

async function startEchoWorker(id: string): Promise<StartedProcess> {
  const worker = startCli('worker-echo', ['--worker-id', id], {
    ...services.env,
    LOG_LEVEL: 'info',
  });
  processes.push(worker);
  await waitForWorkerReady(worker);
  return worker;
}

async function enqueue(args: string[]): Promise<string> {
  const result = await scheduler(['enqueue', ...args, '--json']);
  expect(result.stderr).toBe('');
  expect(result.code).toBe(0);
  return (JSON.parse(result.stdout) as { runId: string }).runId;
}

beforeAll(() => {
  producer = new JobProducer(services.redisUrl, services.prefix);
  scratch = mkdtempSync(join(tmpdir(), 'echo-benchmark-'));
});

afterEach(async () => {
  await killLeftoverProcesses(processes);
});

afterAll(async () => {
  await producer.close();
  rmSync(scratch, { recursive: true, force: true });
});

describe('a benchmark added as one slice (examples/echo-benchmark)', () => {
  it('is named by hand only in its own folder; tools write the lock file, the registry and its deploy places', () => {
    const files = execFileSync('git', ['ls-files', '--cached', '--others', '--exclude-standard'], {
      cwd: REPO_DIR,
      encoding: 'utf8',
    })
      .split('\n')
      .filter((file) => file && existsSync(join(REPO_DIR, file)));
    const naming = files.filter((file) =>
      /@benchfleet\/(echo-benchmark|worker-echo)|worker-echo|echoEntry|echoBenchmark/.test(
        readFileSync(join(REPO_DIR, file), 'utf8'),
      ),
    );
    const byHand = naming.filter(
      (file) =>
        !file.startsWith('examples/echo-benchmark/') &&
        // Tests and the README (whose recipe is this benchmark's code) talk about it.
        !file.endsWith('.test.ts') &&
        file !== 'README.md',
    );
    // None by hand: each is written by `npm install` (the lock file; its prepare, `npm run build`,
    // writes the others from the workspace's package.json files).
    expect(byHand.sort()).toEqual([
      'deploy/compose.yaml',
      'deploy/k8s/benchmark-workers.yaml',
      'libs/benchmarks/src/benchmark-entries.ts',
      'package-lock.json',
    ]);
    // In compose.yaml, only inside the part `npm run build` renders from its package.json.
    const compose = readFileSync(join(REPO_DIR, 'deploy/compose.yaml'), 'utf8');
    const outside =
      compose.slice(0, compose.indexOf(COMPOSE_BEGIN)) +
      compose.slice(compose.indexOf(COMPOSE_END));
    expect(outside).not.toMatch(/echo/);
    expect(readFileSync(join(REPO_DIR, 'deploy/k8s/benchmark-workers.yaml'), 'utf8')).toMatch(
      /^# Benchmark workers without hand-written manifests: written by `npm run build`/,
    );
    // The registry's module is the writer's, from the echo lib's package.json.
    const registry = readFileSync(
      join(REPO_DIR, 'libs/benchmarks/src/benchmark-entries.ts'),
      'utf8',
    );
    expect(registry).toBe(renderBenchmarkEntries());
    expect(benchmarkPackages().map(({ name }) => name)).toContain('@benchfleet/echo-benchmark');
  });

  it('gets a compiled worker bin and a place in the deploy manifests', () => {
    const app = workspaceApp('worker-echo');
    expect(relative(REPO_DIR, app.dir)).toBe('examples/echo-benchmark/worker');
    expect(cliBin('worker-echo')).toBe(app.bin);
    const manifest = JSON.parse(readFileSync(join(app.dir, 'dist', 'build.json'), 'utf8')) as {
      inputs: string[];
    };
    expect(manifest.inputs).toContain('examples/echo-benchmark/lib/src/echo-benchmark.ts');
    expect(existsSync(join(app.dir, 'dist', 'worker-echo.js'))).toBe(true);

    const compose = parse(readFileSync(join(REPO_DIR, 'deploy/compose.yaml'), 'utf8'), {
      merge: true,
    }) as { services: Record<string, { command?: string[]; deploy?: { replicas?: number } }> };
    expect(compose.services['worker-echo']).toMatchObject({
      command: ['worker-echo'],
      deploy: { replicas: 0 },
    });
    const kustomization = parse(
      readFileSync(join(REPO_DIR, 'deploy/k8s/kustomization.yaml'), 'utf8'),
    ) as { resources: string[] };
    expect(kustomization.resources).toContain('benchmark-workers.yaml');
    const deployments = parseAllDocuments(
      readFileSync(join(REPO_DIR, 'deploy/k8s/benchmark-workers.yaml'), 'utf8'),
    ).map(
      (document) =>
        document.toJS() as {
          metadata: { name: string };
          spec: { template: { spec: { containers: { args: string[] }[] } } };
        },
    );
    expect(
      deployments.find((deployment) => deployment.metadata.name === 'worker-echo')?.spec.template
        .spec.containers[0]?.args,
    ).toEqual(['worker-echo']);
  });

  it('runs end to end: enqueue by its own flag, its worker, steps, its summary with its label and scores, status, its tools, export, the dashboard', async () => {
    const aggregator = startCli('scheduler', ['worker', '--worker-id', 'echo-aggregator'], {
      ...services.env,
      LOG_LEVEL: 'info',
    });
    processes.push(aggregator);
    await waitForWorkerReady(aggregator);
    const runId = await enqueue(['--echo-tasks', '6']);
    const run = await services.db
      .selectFrom('runs')
      .selectAll()
      .where('id', '=', runId)
      .executeTakeFirstOrThrow();
    expect(run).toMatchObject({ benchmark: 'echo', config: { step_ms: 20 } });
    await startEchoWorker('echo-1');

    const tasks = await runRows.settled(runId);
    expect(tasks.map((task) => [task.task_id, task.domain, task.status, task.total_steps])).toEqual(
      [
        ['echo-000', 'even', 'success', 1],
        ['echo-001', 'odd', 'failed', 2],
        ['echo-002', 'even', 'success', 3],
        ['echo-003', 'odd', 'failed', 1],
        ['echo-004', 'even', 'success', 2],
        ['echo-005', 'odd', 'failed', 3],
      ],
    );
    expect(tasks.every((task) => task.worker_id === 'echo-1')).toBe(true);
    const steps = await services.db
      .selectFrom('steps')
      .select(['task_id', 'step', 'text'])
      .where('run_id', '=', runId)
      .orderBy('task_id')
      .orderBy('step')
      .execute();
    expect(steps).toHaveLength(12);
    expect(steps[3]).toEqual({ task_id: 'echo-002', step: 1, text: 'say 2: step 1' });

    const { summary } = await runRows.finishedRun(runId);
    expect(summary).toMatchObject({
      benchmark: 'echo',
      success_label: 'scripted success',
      summary: { total_tasks: 6, succeeded: 3, failed: 3, success_rate: 0.5, avg_steps: 2 },
      per_domain: { even: { total: 3, succeeded: 3 }, odd: { total: 3, succeeded: 0 } },
      cost_usd: 0,
      // Its own scores, from results its schema parsed.
      scores: { echoed_steps: 12 },
    });

    const status = await scheduler(['status', runId, '--json']);
    expect(status.code).toBe(0);
    expect(JSON.parse(status.stdout)).toMatchObject({
      successLabel: 'scripted success',
      queueName: 'echo',
      done: 6,
      pending: 0,
      run: { succeeded: 3 },
    });
    const text = await scheduler(['status', runId]);
    expect(text.stdout).toContain(
      '6/6 done, 0 queued, 0 running, 3 success (scripted success), 3 failed',
    );

    // Its tools, mounted as `scheduler echo …` and listed without loading it.
    const help = await scheduler(['--help']);
    expect(help.stdout).toMatch(/^ {2}echo +echo benchmark tools \(an example\)$/m);
    const tool = await scheduler(['echo', 'steps', runId]);
    expect(tool.code).toBe(0);
    expect(tool.stdout.split('\n')).toContain('echo-002 1.1 say 2: step 1');

    // Export: a benchmark with no exporter of its own exports as ATIF.
    const out = join(scratch, 'atif');
    const exported = await scheduler(['export', runId, '--out', out]);
    expect(exported.code, exported.stderr).toBe(0);
    const index = JSON.parse(readFileSync(join(out, 'index.json'), 'utf8')) as {
      tasks: { task_id: string }[];
    };
    expect(index.tasks.map((task) => task.task_id)).toHaveLength(6);

    // The dashboard knows it from the registry and shows its tasks in the generic step view (it
    // chose no trajectory panel), with its own panel below: its table's rows, by its named query.
    const dashboard = startCli('dashboard', ['--port', '0'], services.env);
    processes.push(dashboard);
    const url = await waitFor(
      'the dashboard',
      () => /dashboard: (http:\/\/\S+?)\/?\s/.exec(dashboard.output())?.[1],
    );
    const displays = (await (await fetch(`${url}/api/benchmarks`)).json()) as Record<
      string,
      { successLabel: string; queue: string; trajectory: string }
    >;
    expect(displays.echo).toMatchObject({
      successLabel: 'scripted success',
      queue: 'echo',
      trajectory: 'steps',
    });
    const detail = (await (await fetch(`${url}/api/runs/${runId}/tasks/echo-002`)).json()) as {
      task: { benchmark: string; status: string };
      steps: { step: number; text: string | null }[];
      panels: { id: string; table?: { rows: { cells: Record<string, unknown> }[] } }[];
      panel_queries: string[];
    };
    expect(detail.task).toMatchObject({ benchmark: 'echo', status: 'success' });
    expect(detail.panels.map((panel) => panel.id)).toEqual(['echo-answers']);
    expect(detail.panels[0]?.table?.rows.map((row) => row.cells)).toEqual([
      { attempt: '1', answer: 'say 2', steps: '3', answered_at: expect.any(String) },
    ]);
    expect(detail.panel_queries).toContain('echo_answers');
    expect(detail.steps.map((step) => [step.step, step.text])).toEqual([
      [1, 'say 2: step 1'],
      [2, 'say 2: step 2'],
      [3, 'say 2: step 3'],
    ]);
  });

  it('is cancelled and resumed like any other: cancel stops its running tasks, resume re-enqueues what Redis lost', async () => {
    await startEchoWorker('echo-2');
    const slow = await enqueue([
      '--benchmark',
      'echo',
      '--echo-tasks',
      '8',
      '--echo-step-ms',
      '60000',
    ]);
    await waitFor(
      'four tasks to run',
      async () =>
        (await runRows.tasksOf(slow)).filter((task) => task.status === 'running').length === 4,
    );
    const cancelled = await scheduler(['cancel', slow]);
    expect(cancelled.code).toBe(0);
    expect(cancelled.stderr).toContain('8 task(s) cancelled, 4 waiting job(s) removed');
    expect((await runRows.settled(slow)).map((task) => task.status)).toEqual(
      Array(8).fill('cancelled'),
    );
    await waitFor('the running attempts to close', async () => {
      const attempts = await services.db
        .selectFrom('attempts')
        .select('status')
        .where('run_id', '=', slow)
        .execute();
      return attempts.length === 4 && attempts.every((attempt) => attempt.status === 'cancelled');
    });

    // Redis loses the jobs of a run no worker has started: only Postgres knows it.
    await killLeftoverProcesses(processes);
    // Told by its domain alone this time.
    const lost = await enqueue(['--domain', 'even']);
    await producer.queue('echo').obliterate({ force: true });
    const resumed = await scheduler(['resume', lost]);
    expect(resumed.code).toBe(0);
    expect(resumed.stderr).toContain('2 task(s) re-enqueued');
    await startEchoWorker('echo-3');
    expect((await runRows.settled(lost)).map((task) => [task.task_id, task.status])).toEqual([
      ['echo-000', 'success'],
      ['echo-002', 'success'],
    ]);
    // No `scheduler worker` runs now: the worker that settled the last task wrote the summary.
    expect(await runRows.finishedRun(lost)).toMatchObject({
      status: 'finished',
      summary: { summary: { total_tasks: 2, succeeded: 2 }, scores: { echoed_steps: 4 } },
    });
  });

  it('a run of a benchmark this build does not know: one line naming it and the known ones', async () => {
    await services.db
      .insertInto('runs')
      .values({
        id: 'run-gone',
        name: 'gone',
        benchmark: 'gone',
        config: '{}',
        model: null,
        agent: null,
        code_version: 'test',
      })
      .execute();
    const result = await scheduler(['status', 'run-gone']);
    expect(result.code).toBe(1);
    expect(result.stderr.trim()).toBe(
      `scheduler: benchmark gone is not known to this build (known: ${benchmarks.all.map((benchmark) => benchmark.name).join(', ')})`,
    );
  });
});
