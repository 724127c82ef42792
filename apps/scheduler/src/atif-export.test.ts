import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readArtifact } from '@benchfleet/artifacts';
import { benchmarks } from '@benchfleet/benchmarks';
import {
  LlmInputsRepository,
  RunsRepository,
  StepsRepository,
  TasksRepository,
  type Step,
} from '@benchfleet/db';
import { JobProducer } from '@benchfleet/queue';
import {
  ATIF_EXPORT_PAGE,
  atifImageFile,
  atifImageParts,
  checkAtifModelInputs,
  exportRun,
  readAtifTrajectoryFile,
  type AtifIndex,
  type AtifModelInputCall,
  type AtifTrajectory,
} from '@benchfleet/runs';
import {
  enqueueTestRun,
  fakeScreenshotPng,
  killLeftoverProcesses,
  osworldTestTask,
  runCli,
  RunRows,
  startCli,
  startFakeBytebot,
  startFakeLlm,
  useTestServices,
  waitFor,
  withFakeScenario,
  writeOsworldTestDataset,
  type FakeBytebot,
  type FakeLlm,
  type StartedProcess,
} from '@benchfleet/testing';
import { demoCatalogRequest, importWebshopCatalog } from '@benchfleet/webshop-benchmark';

// `scheduler export RUN --format atif` on runs made by real workers: a WebShop run (LLM agent
// against the fake LLM, priced) and an OSWorld run (fake Bytebot, screenshots in the artifact
// store). Every file is read back with the ATIF reader; the rows say what each must hold.

const services = useTestServices();
const runRows = new RunRows(services);
let producer: JobProducer;
let scratch: string;
let llm: FakeLlm;
let bytebot: FakeBytebot;
const processes: StartedProcess[] = [];
let webshopRunId: string;
let ruleRunId: string;
let osworldRunId: string;

const WEBSHOP_TASKS = 25;
const PRICE = { 'fake-model': { inputUsdPerMillion: 2.5, outputUsdPerMillion: 10 } };
const OSWORLD_TASKS = [
  { id: 'atif-chrome-done', domain: 'chrome', scenario: 'completes' },
  { id: 'atif-os-done', domain: 'os', scenario: 'completes' },
  { id: 'atif-mail-help', domain: 'thunderbird', scenario: 'needs-help' },
];

function scheduler(args: string[]) {
  return runCli('scheduler', args, services.env, 600_000);
}

async function readJson<T>(file: string): Promise<T> {
  return JSON.parse(await readFile(file, 'utf8')) as T;
}

function stepsOf(runId: string, taskId: string, attempt: number): Promise<Step[]> {
  return new StepsRepository(services.db).listByTask(runId, taskId, attempt);
}

/** The call a WebShop action record `{action: 'search[red shirt]'}` is written as. */
function webshopCallOf(step: Step): [string, Record<string, string>] {
  const text = (step.action as { action: string }).action;
  const [, word, argument] = /^(\w+)\[(.*)\]$/s.exec(text)!;
  const name = word!.toLowerCase();
  return [name, { [name === 'search' ? 'query' : 'target']: argument!.trim() }];
}

/** A step's ATIF timestamp: its recorded time to the microsecond (`Date` keeps the millisecond). */
function expectRecordedTime(timestamp: string | null | undefined, step: Step): void {
  expect(timestamp).toMatch(new RegExp(`^${step.at.toISOString().slice(0, 23)}\\d{3}Z$`));
}

/** Every file under `dir`, relative, sorted. */
async function filesUnder(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  return entries
    .filter((entry) => entry.isFile())
    .map((entry) => path.relative(dir, path.join(entry.parentPath, entry.name)))
    .sort();
}

beforeAll(async () => {
  producer = new JobProducer(services.redisUrl, services.prefix);
  scratch = await mkdtemp(path.join(tmpdir(), 'atif-export-'));
  llm = await startFakeLlm();
  bytebot = await startFakeBytebot({ pendingDelayMs: 10, stepIntervalMs: 15, toolDelayMs: 5 });
  await importWebshopCatalog(services.db, demoCatalogRequest({ seed: 0, products: 400 }));

  processes.push(
    startCli(
      'worker-webshop',
      ['--worker-id', 'atif-webshop', '--price-table', JSON.stringify(PRICE)],
      {
        ...services.env,
      },
    ),
    startCli(
      'worker-osworld',
      ['--bytebot-url', bytebot.url, '--stack-id', 'stack-atif', '--grace-s', '5'],
      {
        ...services.env,
        BENCHFLEET_ARTIFACTS: `file://${path.join(scratch, 'artifacts')}`,
      },
    ),
  );
  webshopRunId = await enqueueTestRun(
    { db: services.db, producer },
    {
      benchmark: 'webshop',
      maxTasks: WEBSHOP_TASKS,
      runName: 'atif-webshop',
      flags: { split: 'test', agent: 'llm', llmBaseUrl: llm.baseUrl, llmModel: 'fake-model' },
    },
  );
  ruleRunId = await enqueueTestRun(
    { db: services.db, producer },
    { benchmark: 'webshop', maxTasks: 3, runName: 'atif-rule', flags: { split: 'test' } },
  );
  const dataset = await writeOsworldTestDataset(
    scratch,
    'osworld_dataset',
    OSWORLD_TASKS.map((task) =>
      osworldTestTask(
        task.id,
        withFakeScenario(`Exported “${task.id}”`, task.scenario),
        task.domain,
      ),
    ),
  );
  osworldRunId = await enqueueTestRun(
    { db: services.db, producer },
    { benchmark: 'osworld', maxSteps: 5, runName: 'atif-osworld', flags: { dataset } },
  );
  await runRows.settled(webshopRunId);
  await runRows.settled(ruleRunId);
  await runRows.settled(osworldRunId);
});

afterAll(async () => {
  await killLeftoverProcesses(processes);
  await bytebot?.close();
  await llm?.close();
  await producer?.close();
  await rm(scratch, { recursive: true, force: true });
});

describe('scheduler export --format atif', () => {
  it('writes a WebShop run as one ATIF trajectory per attempt, with tokens, cost, the outcome and each step’s model input', async () => {
    const out = path.join(scratch, 'webshop-atif');
    // Inputs are written beside the episode: wait for every step's call before exporting.
    const stepCount = await services.db
      .selectFrom('steps')
      .select((eb) => eb.fn.countAll<string>().as('n'))
      .where('run_id', '=', webshopRunId)
      .executeTakeFirstOrThrow();
    await waitFor(
      'every step’s model input',
      async () =>
        (await new LlmInputsRepository(services.db).storedSize(webshopRunId)).calls ===
          Number(stepCount.n) || undefined,
      600_000,
      100,
    );
    const result = await scheduler(['export', webshopRunId, '--format', 'atif', '--out', out]);
    expect(result.stderr).toContain(`${WEBSHOP_TASKS} task(s) written to ${out}`);
    expect(result.code).toBe(0);

    const tasks = await runRows.tasksOf(webshopRunId);
    // The fake LLM plays the rule policy: every episode buys (a full reward or not).
    expect(tasks.every((task) => task.attempts === 1 && task.error === null)).toBe(true);
    const files = await filesUnder(out);
    expect(files.filter((file) => !file.startsWith('inputs/'))).toEqual(
      ['index.json', ...tasks.map((task) => `tasks/${task.task_id}/attempt-1.json`)].sort(),
    );
    const inputFiles = files.filter((file) => file.startsWith('inputs/'));
    // One file per distinct message: the system prompt is shared by every call of every task.
    const size = await new LlmInputsRepository(services.db).storedSize(webshopRunId);
    expect(inputFiles).toHaveLength(size.blobs);
    const index = await readJson<AtifIndex>(path.join(out, 'index.json'));
    expect(index.model_inputs).toEqual({ dir: 'inputs', files: size.blobs });
    expect(index).toMatchObject({
      format: 'benchfleet-atif-export',
      atif_schema_version: 'ATIF-v1.7',
      run: { id: webshopRunId, name: 'atif-webshop', benchmark: 'webshop' },
      tasks_exported: WEBSHOP_TASKS,
      tasks_unfinished: 0,
      trajectories: WEBSHOP_TASKS,
      images: 0,
      problems: 0,
    });
    expect(index.tasks.map((entry) => entry.task_id)).toEqual(tasks.map((task) => task.task_id));

    for (const task of tasks) {
      const trajectory = await readAtifTrajectoryFile(
        path.join(out, 'tasks', task.task_id, 'attempt-1.json'),
      );
      const steps = await stepsOf(webshopRunId, task.task_id, 1);
      expect(steps.length).toBeGreaterThan(0);
      expect(trajectory.agent).toMatchObject({ name: 'llm', model_name: 'fake-model' });
      expect(trajectory.steps).toHaveLength(steps.length + 1);
      expect(trajectory.steps[0]).toMatchObject({ source: 'user', message: task.instruction });
      for (const [i, step] of steps.entries()) {
        const atif = trajectory.steps[i + 1]!;
        expect(atif).toMatchObject({
          step_id: i + 2,
          source: 'agent',
          message: step.text ?? '',
          tool_calls: [
            { function_name: webshopCallOf(step)[0], arguments: webshopCallOf(step)[1] },
          ],
          observation: {
            results: [
              { source_call_id: atif.tool_calls![0]!.tool_call_id, content: step.observation },
            ],
          },
          // The step's own cost, priced by the worker.
          metrics: {
            prompt_tokens: step.tokens_in,
            completion_tokens: step.tokens_out,
            cost_usd: step.cost_usd,
          },
          extra: { benchfleet: { step: step.step, reward: step.reward, action: step.action } },
        });
        expectRecordedTime(atif.timestamp, step);
        // The step's LLM call: its messages as files, read back as the call sent them.
        const [call] = (
          atif.extra!['benchfleet'] as { model_input: { calls: AtifModelInputCall[] } }
        ).model_input.calls;
        expect(call).toMatchObject({ call_no: step.step, model: 'fake-model', tools: null });
        const [row] = await new LlmInputsRepository(services.db)
          .callsOfTask(webshopRunId, task.task_id)
          .then((rows) => rows.filter((r) => r.step === step.step));
        const sent = await new LlmInputsRepository(services.db).inputOf(row!);
        expect(
          await Promise.all(call!.messages.map((file) => readJson(path.join(out, file)))),
        ).toEqual(sent.messages);
        expect(step.tokens_in).toBeGreaterThan(0);
        expect(step.cost_usd).toBeCloseTo(
          (step.tokens_in * 2.5 + step.tokens_out * 10) / 1_000_000,
          12,
        );
      }
      expect(await checkAtifModelInputs(out, trajectory)).toEqual([]);
      expect(trajectory.final_metrics).toMatchObject({
        total_prompt_tokens: task.tokens_in,
        total_completion_tokens: task.tokens_out,
        total_cost_usd: task.cost_usd,
        total_steps: steps.length + 1,
      });
      expect(task.cost_usd).toBeCloseTo(
        (task.tokens_in * 2.5 + task.tokens_out * 10) / 1_000_000,
        12,
      );
      expect(trajectory.final_metrics?.extra?.['reward']).toBe(task.reward);
      expect(trajectory.extra).toMatchObject({
        reward: task.reward,
        benchfleet: {
          attempt: { attempt: 1, final: true, status: task.status, error_class: null },
          outcome: {
            status: task.status,
            success: task.success,
            reward: task.reward,
            stop_reason: 'bought',
            final_api_status: task.final_api_status,
            error: null,
            duration_ms: task.duration_ms,
          },
        },
      });
    }
    // The reader's check finds an input file changed or gone.
    const first = tasks[0]!;
    const trajectory = await readAtifTrajectoryFile(
      path.join(out, 'tasks', first.task_id, 'attempt-1.json'),
    );
    const file = (
      trajectory.steps[1]!.extra!['benchfleet'] as { model_input: { calls: AtifModelInputCall[] } }
    ).model_input.calls[0]!.messages[0]!;
    await writeFile(path.join(out, file), '{"role":"system","content":"changed"}');
    expect((await checkAtifModelInputs(out, trajectory)).join('\n')).toContain(`${file}: sha256`);
    await rm(path.join(out, file));
    expect(await checkAtifModelInputs(out, trajectory)).toContain(`${file}: missing`);
  });

  it('writes the rule agent as deterministic dispatches at their recorded times, with no LLM metrics', async () => {
    const out = path.join(scratch, 'rule-atif');
    const result = await scheduler(['export', ruleRunId, '--format', 'atif', '--out', out]);
    expect(result.code, result.stderr).toBe(0);
    const tasks = await runRows.tasksOf(ruleRunId);
    expect(tasks).toHaveLength(3);
    for (const task of tasks) {
      const trajectory = await readAtifTrajectoryFile(
        path.join(out, 'tasks', task.task_id, 'attempt-1.json'),
      );
      const steps = await stepsOf(ruleRunId, task.task_id, 1);
      expect(trajectory.agent).toMatchObject({ name: 'rule' });
      expect(trajectory.agent).not.toHaveProperty('model_name');
      const agentSteps = trajectory.steps.slice(1);
      expect(agentSteps).toHaveLength(steps.length);
      for (const [i, step] of steps.entries()) {
        const atif = agentSteps[i]!;
        expect(atif.llm_call_count).toBe(0);
        expect(atif).not.toHaveProperty('metrics');
        expect(atif.tool_calls?.map((call) => [call.function_name, call.arguments])).toEqual([
          webshopCallOf(step),
        ]);
        expectRecordedTime(atif.timestamp, step);
      }
      // Recorded one after another: no two steps share a time, whatever their latency says.
      const times = agentSteps.map((step) => step.timestamp!);
      expect(new Set(times).size).toBe(times.length);
      expect([...times].sort()).toEqual(times);
      expect(trajectory.final_metrics).not.toHaveProperty('total_prompt_tokens');
      expect(trajectory.final_metrics).not.toHaveProperty('total_completion_tokens');
      expect(trajectory.extra?.['reward']).toBe(task.reward);
    }
  });

  it('writes an OSWorld run with its screenshots as image files the trajectories reference', async () => {
    const out = path.join(scratch, 'osworld-atif');
    const result = await scheduler(['export', osworldRunId, '--format', 'atif', '--out', out]);
    expect(result.stderr).toContain(`${OSWORLD_TASKS.length} task(s) written to ${out}`);
    expect(result.code).toBe(0);
    const tasks = await runRows.tasksOf(osworldRunId);
    expect(tasks.map((task) => [task.task_id, task.status])).toEqual([
      ['atif-chrome-done', 'success'],
      ['atif-os-done', 'success'],
      ['atif-mail-help', 'failed'],
    ]);

    const expectedFiles = ['index.json'];
    let shots = 0;
    for (const task of tasks) {
      const file = path.join(out, 'tasks', task.task_id, 'attempt-1.json');
      const trajectory: AtifTrajectory = await readAtifTrajectoryFile(file);
      expectedFiles.push(`tasks/${task.task_id}/attempt-1.json`);
      const steps = await stepsOf(osworldRunId, task.task_id, 1);
      expect(trajectory.agent.name).toBe('bytebot');
      expect(trajectory.final_metrics).not.toHaveProperty('total_prompt_tokens');
      expect(trajectory.steps).toHaveLength(steps.length + 1);
      for (const [i, step] of steps.entries()) {
        const atif = trajectory.steps[i + 1]!;
        const calls = (step.action as { tool_calls: Array<{ name: string; input: unknown }> })
          .tool_calls;
        expect(atif.tool_calls?.map((call) => [call.function_name, call.arguments])).toEqual(
          calls.map((call) => [call.name, call.input]),
        );
        expect(atif.message).toBe(step.text);
        // No relay, so no call is known: unknown tokens are left out, not written 0.
        expect(atif).not.toHaveProperty('metrics');
        const images = atif.observation?.results.flatMap((r) =>
          Array.isArray(r.content) ? r.content.filter((part) => part.type === 'image') : [],
        );
        if (step.screenshot_uri === null) {
          expect(atif.observation).toBeUndefined();
          continue;
        }
        shots += 1;
        const relative = `images/attempt-1-step-${String(step.step).padStart(3, '0')}.png`;
        expect(images).toEqual([
          { type: 'image', source: { media_type: 'image/png', path: relative } },
        ]);
        expectedFiles.push(`tasks/${task.task_id}/${relative}`);
      }
      // Every image reference resolves to a file of the export, holding the screenshot's bytes.
      for (const image of atifImageParts(trajectory)) {
        const imageFile = atifImageFile(file, image.source.path)!;
        expect(imageFile.startsWith(`${out}${path.sep}`)).toBe(true);
        const step = Number(/step-(\d+)\.png$/.exec(image.source.path)![1]);
        const row = steps.find((s) => s.step === step)!;
        const bytes = await readFile(imageFile);
        expect(bytes).toEqual(await readArtifact(row.screenshot_uri!));
        expect(bytes).toEqual(fakeScreenshotPng(step));
      }
      expect(trajectory.extra).toMatchObject({
        benchfleet: {
          outcome: {
            status: task.status,
            final_api_status: task.final_api_status,
            stop_reason: 'end_status',
            answer: task.answer,
          },
        },
      });
    }
    expect(shots).toBeGreaterThan(3);
    expect(await filesUnder(out)).toEqual(expectedFiles.sort());
    expect(await readJson<AtifIndex>(path.join(out, 'index.json'))).toMatchObject({
      trajectories: 3,
      images: shots,
      problems: 0,
    });
  });

  it('lists a screenshot missing from the artifact store as a problem and writes everything else', async () => {
    const [gone] = await services.db
      .selectFrom('steps')
      .select(['task_id', 'step', 'screenshot_uri'])
      .where('run_id', '=', osworldRunId)
      .where('screenshot_uri', 'is not', null)
      .orderBy('task_id')
      .orderBy('step')
      .limit(1)
      .execute();
    const stored = fileURLToPath(gone!.screenshot_uri!);
    const saved = await readFile(stored);
    await rm(stored);
    try {
      const out = path.join(scratch, 'osworld-hole');
      const result = await scheduler(['export', osworldRunId, '--format', 'atif', '--out', out]);
      expect(result.code).toBe(0);
      expect(result.stderr).toMatch(
        /3 task\(s\) written to .*; 1 problem\(s\), listed in the export \(first: task .* attempt 1 step \d+: screenshot file:\/\/.* cannot be read/,
      );
      const { problems } = await readJson<{ problems: string[] }>(
        path.join(out, 'export_problems.json'),
      );
      expect(problems).toEqual([
        expect.stringContaining(
          `task ${gone!.task_id} attempt 1 step ${gone!.step}: screenshot ${gone!.screenshot_uri} cannot be read`,
        ),
      ]);
      const trajectory = await readAtifTrajectoryFile(
        path.join(out, 'tasks', gone!.task_id, 'attempt-1.json'),
      );
      const step = trajectory.steps.find(
        (s) => (s.extra?.['benchfleet'] as { step: number } | undefined)?.step === gone!.step,
      )!;
      expect(step.observation).toBeUndefined();
      expect(step.extra).toMatchObject({
        benchfleet: {
          screenshot: {
            uri: gone!.screenshot_uri,
            missing: expect.stringMatching(/^cannot be read/),
          },
        },
      });
      expect(await readJson<AtifIndex>(path.join(out, 'index.json'))).toMatchObject({
        problems: 1,
      });
    } finally {
      await writeFile(stored, saved);
    }
  });

  it('is all or nothing: an export that fails after writing trajectories leaves an earlier export as it was', async () => {
    const out = path.join(scratch, 'nested', 'atif');
    expect((await scheduler(['export', webshopRunId, '--format', 'atif', '--out', out])).code).toBe(
      0,
    );
    const before = await filesUnder(out);
    const tasks = await runRows.tasksOf(webshopRunId);
    const last = tasks[tasks.length - 1]!.task_id;
    // The steps of the last task cannot be read: the export fails after the first page of tasks
    // has been written.
    expect(tasks.length).toBeGreaterThan(ATIF_EXPORT_PAGE);
    await sql`alter table steps rename to steps_stored`.execute(services.db);
    await sql
      .raw(
        `create function steps_readable(task text) returns boolean language plpgsql cost 100000 as $$
         begin
           if task = '${last}' then raise exception 'the steps of % cannot be read', task; end if;
           return true;
         end $$`,
      )
      .execute(services.db);
    await sql`create view steps as select * from steps_stored where steps_readable(task_id)`.execute(
      services.db,
    );
    const seen: number[] = [];
    try {
      const failed = await scheduler(['export', webshopRunId, '--format', 'atif', '--out', out]);
      expect(failed.code).toBe(1);
      // Progress lines (JSON when stderr is not a terminal), then the error in one line.
      const lines = failed.stderr.trim().split('\n');
      expect(lines.slice(0, -1).every((line) => line.startsWith('{"progress"'))).toBe(true);
      expect(lines.at(-1)).toBe(
        `scheduler: Postgres refused the request (SQLSTATE P0001): the steps of ${last} cannot be read`,
      );
      // The same failure in-process, to see how far it got before failing.
      await expect(
        exportRun(
          { db: services.db, registry: benchmarks, artifacts: {} },
          webshopRunId,
          'atif',
          path.join(scratch, 'never-made', 'atif'),
          (done) => seen.push(done),
        ),
      ).rejects.toThrow(`the steps of ${last} cannot be read`);
    } finally {
      await sql`drop view steps`.execute(services.db);
      await sql`drop function steps_readable(text)`.execute(services.db);
      await sql`alter table steps_stored rename to steps`.execute(services.db);
    }
    expect(seen.at(-1)).toBe(ATIF_EXPORT_PAGE);
    expect(await filesUnder(out)).toEqual(before);
    expect(await readdir(path.join(scratch, 'nested'))).toEqual(['atif']);
    await expect(readdir(path.join(scratch, 'never-made'))).rejects.toThrow(/ENOENT/);
  });

  it('is offered for every benchmark, and writes every attempt of a retried task', async () => {
    const format = await scheduler([
      'export',
      webshopRunId,
      '--format',
      'csv',
      '--out',
      path.join(scratch, 'x'),
    ]);
    expect(format.code).toBe(2);
    expect(format.stderr.trim()).toBe(
      'scheduler: --format csv: webshop runs export as webshop-jsonl, atif or harbor',
    );

    // A benchmark with no exporter of its own (the echo example) exports as atif by default.
    const registry = benchmarks;
    const runId = 'run-echo-retried';
    await new RunsRepository(services.db).createWithTasks({
      run: {
        id: runId,
        name: 'echo',
        benchmark: 'echo',
        config: JSON.stringify({}),
        code_version: 'test',
      },
      tasks: [
        {
          task_id: 'echo-000',
          seq: 0,
          domain: 'even',
          instruction: 'say 0',
          spec: '{"steps":2,"outcome":"success"}',
        },
        {
          task_id: 'echo-001',
          seq: 1,
          domain: 'odd',
          instruction: 'say 1',
          spec: '{"steps":1,"outcome":"failed"}',
        },
      ],
    });
    const repo = new TasksRepository(services.db);
    const steps = new StepsRepository(services.db);
    const step = (attempt: number, n: number) => ({
      run_id: runId,
      task_id: 'echo-000',
      attempt,
      step: n,
      at: new Date(Date.UTC(2026, 1, 8, 10, attempt, n)),
      action: JSON.stringify({ say: `${attempt}.${n}` }),
      text: `attempt ${attempt} step ${n}`,
      tokens_in: 10 * n,
      tokens_out: n,
    });
    await repo.openAttempt(runId, 'echo-000', 'w-a', 1);
    await steps.insertMany([step(1, 1)]);
    await repo.settle(
      runId,
      'echo-000',
      1,
      {
        status: 'error',
        errorClass: 'infra',
        totalSteps: 1,
        durationMs: 1_000,
        error: 'worker lost',
      },
      false,
    );
    await repo.openAttempt(runId, 'echo-000', 'w-b', 2);
    await steps.insertMany([step(2, 1), step(2, 2)]);
    await repo.settle(runId, 'echo-000', 2, {
      status: 'success',
      totalSteps: 2,
      durationMs: 2_000,
      reward: 1,
      tokensIn: 30,
      tokensOut: 3,
      costUsd: 0.5,
      result: { echoed: 2 },
    });

    const out = path.join(scratch, 'echo-atif');
    const report = await exportRun(
      { db: services.db, registry, artifacts: {} },
      runId,
      undefined,
      out,
    );
    expect(report).toMatchObject({ outDir: out, exported: 1, unfinished: 1, problems: [] });
    expect(await filesUnder(out)).toEqual([
      'index.json',
      'tasks/echo-000/attempt-1.json',
      'tasks/echo-000/attempt-2.json',
    ]);
    const first = await readAtifTrajectoryFile(path.join(out, 'tasks/echo-000/attempt-1.json'));
    const second = await readAtifTrajectoryFile(path.join(out, 'tasks/echo-000/attempt-2.json'));
    expect(first.agent.name).toBe('echo');
    expect(first.steps.map((s) => s.message)).toEqual(['say 0', 'attempt 1 step 1']);
    // The attempt's spend was never recorded (its worker was lost): its steps' sum.
    expect(first.final_metrics).toEqual({
      total_prompt_tokens: 10,
      total_completion_tokens: 1,
      total_steps: 2,
      extra: {
        benchfleet: { recorded_steps: 1, steps_prompt_tokens: 10, steps_completion_tokens: 1 },
      },
    });
    expect(first.extra).toMatchObject({
      benchfleet: {
        attempt: { final: false, status: 'error', error_class: 'infra', error: 'worker lost' },
        outcome: null,
      },
    });
    expect(second.steps.map((s) => s.message)).toEqual([
      'say 0',
      'attempt 2 step 1',
      'attempt 2 step 2',
    ]);
    expect(second.steps[1]!.tool_calls).toEqual([
      { tool_call_id: 'step-1-call-1', function_name: 'action', arguments: { say: '2.1' } },
    ]);
    expect(second.final_metrics).toMatchObject({
      total_prompt_tokens: 30,
      total_completion_tokens: 3,
      total_cost_usd: 0.5,
    });
    expect(second.extra).toMatchObject({
      reward: 1,
      benchfleet: {
        attempt: { final: true, status: 'success' },
        outcome: { status: 'success', reward: 1, result: { echoed: 2 } },
      },
    });
    expect((await readJson<AtifIndex>(path.join(out, 'index.json'))).tasks).toEqual([
      {
        task_id: 'echo-000',
        base_task_id: 'echo-000',
        epoch: 1,
        domain: 'even',
        status: 'success',
        attempts: [
          {
            attempt: 1,
            status: 'error',
            final: false,
            file: 'tasks/echo-000/attempt-1.json',
            steps: 1,
            images: 0,
          },
          {
            attempt: 2,
            status: 'success',
            final: true,
            file: 'tasks/echo-000/attempt-2.json',
            steps: 2,
            images: 0,
          },
        ],
      },
    ]);
  });
});
