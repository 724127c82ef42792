import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { sql } from 'kysely';
import pg from 'pg';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readArtifact } from '@benchfleet/artifacts';
import { computeRunNumbers } from '@benchfleet/benchmark-kit';
import { benchmarks } from '@benchfleet/benchmarks';
import { roundLikePython } from '@benchfleet/core';
import { RunsRepository, StepsRepository, TasksRepository } from '@benchfleet/db';
import { JobProducer } from '@benchfleet/queue';
import { computeRunSummary, exportRun } from '@benchfleet/runs';
import {
  enqueueTestRun,
  fakeScreenshotPng,
  osworldTestTask,
  runCli,
  startCli,
  startFakeBytebot,
  useTestServices,
  waitFor,
  withFakeScenario,
  writeOsworldTestDataset,
  type FakeBytebot,
  type StartedProcess,
} from '@benchfleet/testing';

// `scheduler export RUN --format osworld-logs` after a real worker-osworld run against the fake
// Bytebot: the original directory layout, rebuilt from Postgres rows and the artifact store.

const services = useTestServices();
let producer: JobProducer;
let scratchDir: string;
let fake: FakeBytebot;
let worker: StartedProcess;
let runId: string;

const TASKS: Array<{ id: string; domain: string; scenario: string }> = [
  { id: 'exp-chrome-done', domain: 'chrome', scenario: 'completes' },
  { id: 'exp-os-done', domain: 'os', scenario: 'completes' },
  { id: 'exp-mail-help', domain: 'thunderbird', scenario: 'needs-help' },
  { id: 'exp-os-endless', domain: 'os', scenario: 'never-finishes' },
  { id: 'exp-chrome-rejected', domain: 'chrome', scenario: 'rejected' },
];

function scheduler(args: string[]) {
  return runCli('scheduler', args, services.env, 600_000);
}

async function readJson(file: string): Promise<Record<string, unknown>> {
  return JSON.parse(await readFile(file, 'utf8')) as Record<string, unknown>;
}

// The original script's files for the same five tasks (see the fixture's SOURCE.md).
const ORIGINAL_LOGS = fileURLToPath(
  new URL('../../../libs/osworld/fixtures/original-osworld-logs', import.meta.url),
);
const NUMBER_TAG = '\u0000number';
const NUMBER = /-?\d+(\.\d+)?([eE][+-]?\d+)?/y;

/** JSON text parsed with every number tagged `int` or `float` by how it is written (`40` vs `40.0`). */
function parseTypedJson(text: string): unknown {
  let tagged = '';
  for (let i = 0; i < text.length;) {
    const char = text[i]!;
    if (char === '"') {
      let end = i + 1;
      while (text[end] !== '"') end += text[end] === '\\' ? 2 : 1;
      tagged += text.slice(i, end + 1);
      i = end + 1;
      continue;
    }
    NUMBER.lastIndex = i;
    const number = char === '-' || (char >= '0' && char <= '9') ? NUMBER.exec(text) : null;
    if (number) {
      const kind = /[.eE]/.test(number[0]) ? 'float' : 'int';
      tagged += JSON.stringify({ [NUMBER_TAG]: kind, raw: number[0] });
      i += number[0].length;
      continue;
    }
    tagged += char;
    i += 1;
  }
  return JSON.parse(tagged);
}

const jsonType = (value: unknown): string =>
  value === null
    ? 'null'
    : Array.isArray(value)
      ? 'array'
      : typeof value === 'object' && NUMBER_TAG in value
        ? String((value as Record<string, unknown>)[NUMBER_TAG])
        : typeof value;

/**
 * Every difference between the original's file and ours: a key missing, added (outside a
 * `benchfleet` key) or out of order, a value of another JSON type, or another value where the
 * value does not depend on the moment, the machine or the agent's pace (`varies`).
 */
function differences(
  original: unknown,
  ours: unknown,
  where: string,
  varies: (where: string) => boolean,
): string[] {
  const [a, b] = [jsonType(original), jsonType(ours)];
  if (a !== b) return [`${where}: ${a} in the original, ${b} in ours`];
  if (a === 'array') {
    const [x, y] = [original as unknown[], ours as unknown[]];
    if (x.length !== y.length && !varies(where))
      return [`${where}: ${x.length} items in the original, ${y.length} in ours`];
    return x
      .slice(0, y.length)
      .flatMap((item, i) => differences(item, y[i], `${where}[${i}]`, varies));
  }
  if (a === 'object') {
    const [x, y] = [original as Record<string, unknown>, ours as Record<string, unknown>];
    const ourKeys = Object.keys(y).filter((key) => key !== 'benchfleet');
    // Bytebot's own objects (a tool call's input, the model) pass through jsonb, which keeps their
    // keys but not their order; the files' own objects keep the original's order.
    const passedThrough = /(\.input|\.model)$/.test(where);
    const sameKeys = passedThrough
      ? [...ourKeys].sort().join() === Object.keys(x).sort().join()
      : ourKeys.join() === Object.keys(x).join();
    if (!sameKeys)
      return [
        `${where}: keys ${Object.keys(x).join(',')} in the original, ${ourKeys.join(',')} in ours`,
      ];
    return ourKeys.flatMap((key) => differences(x[key], y[key], `${where}.${key}`, varies));
  }
  if (varies(where) || a === 'float') return [];
  const [x, y] = [original, ours].map((value) =>
    typeof value === 'object' && value !== null ? (value as { raw: string }).raw : value,
  );
  return x === y
    ? []
    : [`${where}: ${JSON.stringify(x)} in the original, ${JSON.stringify(y)} in ours`];
}

async function jsonFilesUnder(dir: string): Promise<string[]> {
  return (await readdir(dir, { recursive: true })).filter((name) => name.endsWith('.json')).sort();
}

beforeAll(async () => {
  producer = new JobProducer(services.redisUrl, services.prefix);
  scratchDir = await mkdtemp(path.join(tmpdir(), 'osworld-export-'));
  fake = await startFakeBytebot({ pendingDelayMs: 10, stepIntervalMs: 15, toolDelayMs: 5 });
  worker = startCli(
    'worker-osworld',
    ['--bytebot-url', fake.url, '--stack-id', 'stack-export', '--grace-s', '5'],
    {
      ...services.env,
      BENCHFLEET_ARTIFACTS: `file://${path.join(scratchDir, 'artifacts')}`,
    },
  );

  const tasks = TASKS.map((task) =>
    osworldTestTask(
      task.id,
      withFakeScenario(`Exported task “${task.id}”`, task.scenario),
      task.domain,
    ),
  );
  const datasetPath = await writeOsworldTestDataset(scratchDir, 'osworld_dataset', tasks);
  runId = await enqueueTestRun(
    { db: services.db, producer },
    // As the original script's files in libs/osworld/fixtures were made: --max-tasks 10 --max-steps 5.
    {
      benchmark: 'osworld',
      maxTasks: 10,
      maxSteps: 5,
      runName: 'export-me',
      flags: { dataset: datasetPath },
    },
  );
  await waitFor(
    'the run to settle',
    async () => {
      const open = await services.db
        .selectFrom('tasks')
        .select('task_id')
        .where('run_id', '=', runId)
        .where('status', 'in', ['queued', 'running'])
        .execute();
      return open.length === 0;
    },
    600_000,
    100,
  );
});

afterAll(async () => {
  if (worker && worker.child.exitCode === null && worker.child.signalCode === null) {
    worker.child.kill('SIGTERM');
    await worker.exited;
  }
  await fake?.close();
  await producer?.close();
  await rm(scratchDir, { recursive: true, force: true });
});

describe('scheduler export --format osworld-logs', () => {
  it('writes the original layout from the rows of the final attempts and the screenshots in the artifact store', async () => {
    const outDir = path.join(scratchDir, 'osworld-logs');
    const result = await scheduler(['export', runId, '--format', 'osworld-logs', '--out', outDir]);
    expect(result.stderr).toContain(`5 task(s) written to ${outDir}`);
    expect(result.code).toBe(0);

    const rows = await services.db
      .selectFrom('tasks')
      .selectAll()
      .where('run_id', '=', runId)
      .orderBy('seq')
      .execute();
    expect(rows.map((task) => [task.task_id, task.status, task.total_steps])).toEqual([
      ['exp-chrome-done', 'success', 4],
      ['exp-os-done', 'success', 4],
      ['exp-mail-help', 'failed', 3],
      ['exp-os-endless', 'cancelled', 5],
      ['exp-chrome-rejected', 'error', 0],
    ]);
    expect((await readdir(outDir)).sort()).toEqual(
      [...TASKS.map((task) => task.id), 'final.json'].sort(),
    );

    for (const task of rows) {
      const taskDir = path.join(outDir, task.task_id);
      // The original writes no result.json for a task whose create failed (final.json has it).
      if (task.final_api_status === 'CREATE_FAILED') {
        await expect(readFile(path.join(taskDir, 'result.json'))).rejects.toThrow(/ENOENT/);
        expect(await readdir(path.join(taskDir, 'screenshots'))).toEqual([]);
        continue;
      }
      const resultJson = await readJson(path.join(taskDir, 'result.json'));
      // The original's TaskResult, field for field and in its order.
      expect(Object.keys(resultJson)).toEqual([
        'task_id',
        'domain',
        'instruction',
        'bytebot_task_id',
        'status',
        'final_api_status',
        'total_steps',
        'start_time',
        'end_time',
        'duration_seconds',
        'error_message',
      ]);
      expect(resultJson).toMatchObject({
        task_id: task.task_id,
        domain: task.domain,
        instruction: task.instruction,
        bytebot_task_id: task.external_id ?? '',
        status: task.status,
        final_api_status: task.final_api_status,
        total_steps: task.total_steps,
        duration_seconds: roundLikePython(task.duration_ms! / 1000, 1),
        error_message: task.status === 'error' ? task.error : null,
      });
      expect(resultJson.start_time).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{6})?\+00:00$/);
      expect(resultJson.end_time).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{6})?\+00:00$/);
      // The non-ASCII quotes of the instruction are escaped, as Python's json.dump does.
      expect(await readFile(path.join(taskDir, 'result.json'), 'utf8')).toContain('\\u201c');

      const steps = await services.db
        .selectFrom('steps')
        .selectAll()
        .where('run_id', '=', runId)
        .where('task_id', '=', task.task_id)
        .where('attempt', '=', task.attempts)
        .orderBy('step')
        .execute();
      expect(steps).toHaveLength(task.total_steps);
      const files = (await readdir(taskDir)).filter((name) => name.startsWith('step_')).sort();
      expect(files).toEqual(steps.map((step) => `step_00${step.step}.json`));
      const screenshots = (await readdir(path.join(taskDir, 'screenshots'))).sort();
      expect(screenshots).toEqual(
        steps
          .filter((step) => step.screenshot_uri !== null)
          .map((step) => `step_00${step.step}.png`),
      );
      for (const step of steps) {
        const stepJson = await readJson(path.join(taskDir, `step_00${step.step}.json`));
        expect(stepJson).toEqual({
          step_number: step.step,
          timestamp: step.at.toISOString(),
          message_id: step.external_id,
          tool_calls: (step.action as { tool_calls: unknown[] }).tool_calls,
          text_content: step.text,
          has_screenshot: step.screenshot_uri !== null,
          screenshot_file:
            step.screenshot_uri === null ? null : `screenshots/step_00${step.step}.png`,
        });
        if (step.screenshot_uri !== null) {
          const png = await readFile(path.join(taskDir, 'screenshots', `step_00${step.step}.png`));
          expect(png).toEqual(await readArtifact(step.screenshot_uri));
          expect(png).toEqual(fakeScreenshotPng(step.step));
        }
      }
    }
    const doneStep = await readJson(path.join(outDir, 'exp-chrome-done', 'step_004.json'));
    expect(doneStep).toMatchObject({
      tool_calls: [
        {
          name: 'set_task_status',
          input: { status: 'completed', description: 'The task is done.' },
        },
      ],
      has_screenshot: false,
      screenshot_file: null,
    });

    const finalJson = await readJson(path.join(outDir, 'final.json'));
    expect(Object.keys(finalJson)).toEqual([
      'benchmark_config',
      'summary',
      'per_domain',
      'started_at',
      'finished_at',
      'total_duration_seconds',
      'tasks',
    ]);
    const taskEntries = rows.map((task) => ({
      task_id: task.task_id,
      domain: task.domain,
      status: task.status,
      total_steps: task.total_steps,
      duration_seconds: roundLikePython(task.duration_ms! / 1000, 1),
    }));
    const expected = computeRunNumbers(taskEntries);
    // Our summaries count successes as `succeeded`; final.json keeps the original's `completed`.
    const original = <T extends { succeeded: number }>({ succeeded, ...rest }: T) => ({
      ...rest,
      completed: succeeded,
    });
    expect(finalJson.summary).toEqual(original(expected.summary));
    expect(finalJson.per_domain).toEqual(
      Object.fromEntries(
        Object.entries(expected.per_domain).map(([domain, numbers]) => [domain, original(numbers)]),
      ),
    );
    expect(finalJson.summary).toMatchObject({
      total_tasks: 5,
      completed: 2,
      failed: 1,
      cancelled: 1,
      errors: 1,
      success_rate: 0.4,
    });
    // The aggregate job computes the same numbers from the same rows.
    const runSummary = await computeRunSummary(services.db, benchmarks, runId);
    expect(finalJson.summary).toEqual(original(runSummary.summary));
    expect(finalJson.per_domain).toEqual(
      Object.fromEntries(
        Object.entries(runSummary.per_domain).map(([domain, numbers]) => [
          domain,
          original(numbers),
        ]),
      ),
    );
    expect(finalJson.tasks).toEqual(taskEntries);
    const run = await new RunsRepository(services.db).get(runId);
    expect(finalJson.benchmark_config).toEqual({
      max_tasks: 10,
      max_steps: 5,
      poll_interval: 3,
      api_url: fake.url,
      // The run named no model: the one its stack offered first, recorded on the run by the worker.
      model: expect.objectContaining({ provider: 'proxy', name: 'fake-model' }),
      dataset: path.join(scratchDir, 'osworld_dataset.json'),
      domain: 'all',
      benchfleet: {
        run_id: runId,
        run_name: 'export-me',
        code_version: run!.code_version,
        tasks: 5,
        domains: null,
        api_urls: [fake.url],
        stall_timeout_seconds: 300,
        events: expect.stringContaining('Socket.IO'),
      },
    });
    const started = Date.parse(String(finalJson.started_at));
    const finished = Date.parse(String(finalJson.finished_at));
    expect(started).toBe(run!.started_at!.getTime());
    expect(finished).toBe(Math.max(...rows.map((task) => task.finished_at!.getTime())));
    expect(finalJson.total_duration_seconds).toBe(roundLikePython((finished - started) / 1000, 1));
  });

  it("matches the original script's files: the same files, keys in order, and every value's JSON type", async () => {
    const outDir = path.join(scratchDir, 'as-the-original');
    expect((await scheduler(['export', runId, '--out', outDir])).code).toBe(0);
    // exp-chrome-rejected (its create failed) has no result.json in either.
    expect(await jsonFilesUnder(outDir)).toEqual(await jsonFilesUnder(ORIGINAL_LOGS));
    // What depends on the moment, the machine and the pace of the agent: compared by type only.
    const VARYING =
      /\.(timestamp|message_id|bytebot_task_id|start_time|end_time|started_at|finished_at|api_url|dataset|longest_task\.task_id)$/;
    // The original read 138 messages of the endless task in one poll before it checked the limit of 5.
    const ENDLESS =
      /^(exp-os-endless\/result\.json\.total_steps|final\.json\.summary\.max_steps_task\.steps|final\.json\.tasks\[3\]\.total_steps)$/;
    const problems: string[] = [];
    for (const file of await jsonFilesUnder(ORIGINAL_LOGS)) {
      const [original, ours] = await Promise.all(
        [ORIGINAL_LOGS, outDir].map(async (dir) =>
          parseTypedJson(await readFile(path.join(dir, file), 'utf8')),
        ),
      );
      problems.push(
        ...differences(original, ours, file, (where) => VARYING.test(where) || ENDLESS.test(where)),
      );
    }
    expect(problems).toEqual([]);
    // Spot checks of what the comparison rests on: floats as Python writes them, ints where it has them.
    const finalText = await readFile(path.join(outDir, 'final.json'), 'utf8');
    expect(finalText).toContain('"poll_interval": 3.0');
    expect(finalText).toMatch(/"success_rate": 0\.4,/);
    expect(finalText).toMatch(/"task_id": "exp-chrome-rejected",[^}]*"duration_seconds": 0\n/);
    const doneResult = await readFile(path.join(outDir, 'exp-chrome-done', 'result.json'), 'utf8');
    expect(doneResult).toMatch(/"duration_seconds": \d+\.\d,/);
  });

  it('reports a screenshot missing from the artifact store in the export, and writes everything else', async () => {
    const [gone] = await services.db
      .selectFrom('steps')
      .select(['task_id', 'step', 'screenshot_uri'])
      .where('run_id', '=', runId)
      .where('screenshot_uri', 'is not', null)
      .orderBy('task_id')
      .orderBy('step')
      .limit(1)
      .execute();
    const saved = await readFile(fileURLToPath(gone!.screenshot_uri!));
    await rm(fileURLToPath(gone!.screenshot_uri!));
    try {
      const outDir = path.join(scratchDir, 'with-a-hole');
      const result = await scheduler([
        'export',
        runId,
        '--format',
        'osworld-logs',
        '--out',
        outDir,
      ]);
      expect(result.code).toBe(0);
      expect(result.stderr).toMatch(
        /5 task\(s\) written to .*; 1 problem\(s\), listed in the export \(first: task .* step \d+: screenshot file:\/\/.* cannot be read/,
      );
      const problems = (await readJson(path.join(outDir, 'export_problems.json')))
        .problems as string[];
      expect(problems).toEqual([
        expect.stringContaining(
          `task ${gone!.task_id} step ${gone!.step}: screenshot ${gone!.screenshot_uri} cannot be read`,
        ),
      ]);
      const stepFile = path.join(
        outDir,
        gone!.task_id,
        `step_${String(gone!.step).padStart(3, '0')}.json`,
      );
      expect(await readJson(stepFile)).toMatchObject({
        has_screenshot: false,
        screenshot_file: null,
      });
      expect(await readdir(outDir)).toContain('final.json');
    } finally {
      await writeFile(fileURLToPath(gone!.screenshot_uri!), saved);
    }
  });

  it('is all or nothing: an export that fails half-way leaves no directory, and an earlier one as it was', async () => {
    const outDir = path.join(scratchDir, 'nested', 'export');
    expect((await scheduler(['export', runId, '--out', outDir])).code).toBe(0);
    const before = (await readdir(outDir, { recursive: true })).sort();
    // The steps of the second task cannot be read: the export fails after it has written the first.
    await sql`alter table steps rename to steps_away`.execute(services.db);
    try {
      const failed = await scheduler(['export', runId, '--out', outDir]);
      expect(failed.code).toBe(1);
      expect(failed.stderr.trim().split('\n')).toHaveLength(1);
      expect(failed.stderr).toMatch(
        /^scheduler: Postgres refused the request \(SQLSTATE 42P01\): relation "steps" does not exist/,
      );
      const fresh = path.join(scratchDir, 'never-made', 'export');
      expect((await scheduler(['export', runId, '--out', fresh])).code).toBe(1);
      await expect(readdir(path.join(scratchDir, 'never-made'))).rejects.toThrow(/ENOENT/);
    } finally {
      await sql`alter table steps_away rename to steps`.execute(services.db);
    }
    expect((await readdir(outDir, { recursive: true })).sort()).toEqual(before);
    expect(
      (await readdir(path.join(scratchDir, 'nested'))).filter((name) => name !== 'export'),
    ).toEqual([]);
  });

  // Once: Ctrl-C during an export left a hidden `.export.partial-…` directory for ever.
  it('leaves no staging directory when interrupted (Ctrl-C) half-way', async () => {
    const parent = path.join(scratchDir, 'interrupted');
    const outDir = path.join(parent, 'export');
    // The export waits on the steps it reads, so it is surely half-way when Ctrl-C comes.
    const locker = new pg.Client({ connectionString: services.databaseUrl });
    await locker.connect();
    try {
      await locker.query('begin');
      await locker.query('lock table steps in access exclusive mode');
      const exporting = startCli('scheduler', ['export', runId, '--out', outDir], services.env);
      await waitFor('the export to stage its files', async () =>
        (await readdir(parent).catch(() => [] as string[])).some((name) =>
          name.startsWith('.export.partial-'),
        ),
      );
      exporting.child.kill('SIGINT');
      expect((await exporting.exited).signal).toBe('SIGINT');
    } finally {
      await locker.query('rollback');
      await locker.end();
    }
    await expect(readdir(parent)).rejects.toThrow(/ENOENT/);
  });

  it('refuses a WebShop run, an unknown run and an unknown format in one line, exit code 2', async () => {
    const webshopRunId = 'run-webshop-not-exportable';
    await new RunsRepository(services.db).createWithTasks({
      run: {
        id: webshopRunId,
        name: 'webshop',
        benchmark: 'webshop',
        config: JSON.stringify({ catalog_id: 'demo' }),
        code_version: 'test',
      },
      tasks: [],
    });
    const outDir = path.join(scratchDir, 'refused');
    const webshop = await scheduler([
      'export',
      webshopRunId,
      '--format',
      'osworld-logs',
      '--out',
      outDir,
    ]);
    expect(webshop.code).toBe(2);
    expect(webshop.stderr.trim()).toBe(
      'scheduler: --format osworld-logs: webshop runs export as webshop-jsonl, atif or harbor',
    );

    const unknown = await scheduler(['export', 'run-nope', '--out', outDir]);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/^scheduler: run run-nope not found/);

    const format = await scheduler(['export', runId, '--format', 'csv', '--out', outDir]);
    expect(format.code).toBe(2);
    expect(format.stderr.trim()).toBe(
      'scheduler: --format csv: osworld runs export as osworld-logs, atif or harbor',
    );
    await expect(readdir(outDir)).rejects.toThrow(/ENOENT/);
  });

  it('exports only the final attempt of a retried task and leaves unfinished tasks out', async () => {
    const retriedRunId = 'run-retried-osworld';
    await new RunsRepository(services.db).createWithTasks({
      run: {
        id: retriedRunId,
        name: 'retried',
        benchmark: 'osworld',
        config: JSON.stringify({ max_steps: 100, domains: ['vlc'] }),
        code_version: 'test',
      },
      tasks: [
        {
          task_id: 'vlc-retried',
          seq: 0,
          domain: 'vlc',
          instruction: 'Play the video',
          spec: '{}',
        },
        { task_id: 'vlc-waiting', seq: 1, domain: 'vlc', instruction: 'Mute it', spec: '{}' },
      ],
    });
    const tasks = new TasksRepository(services.db);
    const steps = new StepsRepository(services.db);
    const step = (attempt: number, n: number, id: string) => ({
      run_id: retriedRunId,
      task_id: 'vlc-retried',
      attempt,
      step: n,
      at: new Date(Date.UTC(2026, 1, 8, 10, attempt, n)),
      action: JSON.stringify({ tool_calls: [{ name: 'computer_screenshot', input: {} }] }),
      text: `attempt ${attempt} step ${n}`,
      screenshot_uri: null,
      external_id: id,
    });
    await tasks.openAttempt(retriedRunId, 'vlc-retried', 'stack-a', 1);
    await tasks.setExternalId(retriedRunId, 'vlc-retried', 1, 'bytebot-first');
    await steps.insertMany([step(1, 1, 'm-a1'), step(1, 2, 'm-a2'), step(1, 3, 'm-a3')]);
    await tasks.settle(
      retriedRunId,
      'vlc-retried',
      1,
      {
        status: 'error',
        errorClass: 'infra',
        totalSteps: 3,
        durationMs: 5_000,
        error: 'Bytebot unreachable',
      },
      false,
    );
    await tasks.openAttempt(retriedRunId, 'vlc-retried', 'stack-b', 2);
    await steps.insertMany([step(2, 1, 'm-b1'), step(2, 2, 'm-b2')]);
    await tasks.settle(retriedRunId, 'vlc-retried', 2, {
      status: 'success',
      finalApiStatus: 'COMPLETED',
      totalSteps: 2,
      durationMs: 12_300,
      externalId: 'bytebot-second',
      result: {
        bytebot_task_id: 'bytebot-second',
        start_time: '2026-02-08T10:02:00+00:00',
        end_time: '2026-02-08T10:02:12.300000+00:00',
      },
    });

    const outDir = path.join(scratchDir, 'retried');
    const report = await exportRun(
      { db: services.db, registry: benchmarks, artifacts: {} },
      retriedRunId,
      'osworld-logs',
      outDir,
    );
    expect(report).toMatchObject({ outDir, exported: 1, unfinished: 1, problems: [] });
    expect((await readdir(outDir)).sort()).toEqual(['final.json', 'vlc-retried']);
    expect((await readdir(path.join(outDir, 'vlc-retried'))).sort()).toEqual([
      'result.json',
      'screenshots',
      'step_001.json',
      'step_002.json',
    ]);
    expect(await readJson(path.join(outDir, 'vlc-retried', 'step_002.json'))).toMatchObject({
      message_id: 'm-b2',
      text_content: 'attempt 2 step 2',
      has_screenshot: false,
    });
    expect(await readJson(path.join(outDir, 'vlc-retried', 'result.json'))).toMatchObject({
      bytebot_task_id: 'bytebot-second',
      status: 'success',
      total_steps: 2,
      start_time: '2026-02-08T10:02:00+00:00',
      end_time: '2026-02-08T10:02:12.300000+00:00',
      duration_seconds: 12.3,
    });
    const finalJson = await readJson(path.join(outDir, 'final.json'));
    expect(finalJson.summary).toMatchObject({
      total_tasks: 1,
      completed: 1,
      avg_steps: 2,
      avg_duration_seconds: 12.3,
    });
    expect(finalJson.benchmark_config).toMatchObject({
      max_tasks: 2,
      max_steps: 100,
      domain: 'vlc',
      dataset: null,
    });
  });
});
