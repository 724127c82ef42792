import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { JobProducer } from '@benchfleet/queue';
import {
  atifImageFile,
  atifImageParts,
  harborJobConfigSchema,
  harborJobId,
  harborJobResultSchema,
  harborTrialConfigSchema,
  harborTrialName,
  harborTrialResultSchema,
  readAtifTrajectoryFile,
  type HarborTrialResult,
} from '@benchfleet/runs';
import {
  enqueueTestRun,
  killLeftoverProcesses,
  osworldTestTask,
  runCli,
  RunRows,
  startCli,
  startFakeBytebot,
  startFakeLlm,
  useTestServices,
  withFakeScenario,
  writeOsworldTestDataset,
  type FakeBytebot,
  type FakeLlm,
  type StartedProcess,
} from '@benchfleet/testing';
import { demoCatalogRequest, importWebshopCatalog } from '@benchfleet/webshop-benchmark';

// `scheduler export RUN --format harbor` on runs made by real workers: a priced WebShop run (LLM
// agent against the fake LLM), a rule-agent run, and an OSWorld run with screenshots. Every file
// is read back through Harbor's models (harbor-models.ts, from Harbor's pydantic definitions), and
// its numbers are checked against the rows.

const services = useTestServices();
const runRows = new RunRows(services);
let producer: JobProducer;
let scratch: string;
let llm: FakeLlm;
let bytebot: FakeBytebot;
const processes: StartedProcess[] = [];
let llmRunId: string;
let ruleRunId: string;
let osworldRunId: string;
let epochsRunId: string;

const LLM_TASKS = 6;
const PRICE = { 'fake-model': { inputUsdPerMillion: 2.5, outputUsdPerMillion: 10 } };

async function readJson(file: string): Promise<unknown> {
  return JSON.parse(await readFile(file, 'utf8')) as unknown;
}

async function exportHarbor(runId: string, name: string): Promise<string> {
  const out = path.join(scratch, name);
  const result = await runCli(
    'scheduler',
    ['export', runId, '--format', 'harbor', '--out', out],
    services.env,
    120_000,
  );
  expect(result.code, result.stderr).toBe(0);
  return out;
}

/** Each trial directory's result, read back through Harbor's TrialResult model. */
async function trialsIn(out: string): Promise<HarborTrialResult[]> {
  const entries = await readdir(out, { withFileTypes: true });
  const trials: HarborTrialResult[] = [];
  for (const entry of entries
    .filter((e) => e.isDirectory())
    .sort((a, b) => (a.name < b.name ? -1 : 1))) {
    const dir = path.join(out, entry.name);
    harborTrialConfigSchema.parse(await readJson(path.join(dir, 'config.json')));
    trials.push(harborTrialResultSchema.parse(await readJson(path.join(dir, 'result.json'))));
  }
  return trials;
}

beforeAll(async () => {
  producer = new JobProducer(services.redisUrl, services.prefix);
  scratch = await mkdtemp(path.join(tmpdir(), 'harbor-export-'));
  llm = await startFakeLlm();
  bytebot = await startFakeBytebot({ pendingDelayMs: 10, stepIntervalMs: 15, toolDelayMs: 5 });
  await importWebshopCatalog(services.db, demoCatalogRequest({ seed: 0, products: 300 }));
  processes.push(
    startCli(
      'worker-webshop',
      ['--worker-id', 'harbor-webshop', '--price-table', JSON.stringify(PRICE)],
      services.env,
    ),
    startCli(
      'worker-osworld',
      ['--bytebot-url', bytebot.url, '--stack-id', 'stack-harbor', '--grace-s', '5'],
      { ...services.env, BENCHFLEET_ARTIFACTS: `file://${path.join(scratch, 'artifacts')}` },
    ),
  );
  llmRunId = await enqueueTestRun(
    { db: services.db, producer },
    {
      benchmark: 'webshop',
      maxTasks: LLM_TASKS,
      runName: 'harbor-llm',
      flags: { split: 'test', agent: 'llm', llmBaseUrl: llm.baseUrl, llmModel: 'fake-model' },
    },
  );
  ruleRunId = await enqueueTestRun(
    { db: services.db, producer },
    { benchmark: 'webshop', maxTasks: 3, runName: 'harbor-rule', flags: { split: 'test' } },
  );
  epochsRunId = await enqueueTestRun(
    { db: services.db, producer },
    {
      benchmark: 'webshop',
      maxTasks: 2,
      epochs: 3,
      runName: 'harbor-epochs',
      flags: { split: 'test' },
    },
  );
  const dataset = await writeOsworldTestDataset(scratch, 'osworld_dataset', [
    osworldTestTask('harbor-os-done', withFakeScenario('Exported, done', 'completes'), 'os'),
    osworldTestTask(
      'harbor-mail-help',
      withFakeScenario('Exported, help', 'needs-help'),
      'thunderbird',
    ),
  ]);
  osworldRunId = await enqueueTestRun(
    { db: services.db, producer },
    { benchmark: 'osworld', maxSteps: 5, runName: 'harbor-osworld', flags: { dataset } },
  );
  await Promise.all([
    runRows.settled(llmRunId),
    runRows.settled(ruleRunId),
    runRows.settled(osworldRunId),
    runRows.settled(epochsRunId),
  ]);
});

afterAll(async () => {
  await killLeftoverProcesses(processes);
  await bytebot?.close();
  await llm?.close();
  await producer?.close();
  await rm(scratch, { recursive: true, force: true });
});

describe('scheduler export --format harbor', () => {
  it("writes a priced WebShop run as Harbor's job: trials with rewards, spend and trajectories equal to the rows", async () => {
    const out = await exportHarbor(llmRunId, 'llm-job');
    const tasks = await runRows.tasksOf(llmRunId);
    const trials = await trialsIn(out);
    expect(trials.map((trial) => trial.task_name).sort()).toEqual(
      tasks.map((task) => task.task_id).sort(),
    );
    for (const task of tasks) {
      const trial = trials.find((t) => t.task_name === task.task_id)!;
      const name = harborTrialName(llmRunId, task.task_id);
      expect(trial.trial_name).toBe(name);
      expect(name).toMatch(/^goal-\d{5}__[2-9A-HJ-NP-Za-km-z]{7}$/);
      expect(trial.trial_uri).toBe(name);
      expect(trial.config.job_id).toBe(harborJobId(llmRunId));
      expect(trial.verifier_result?.rewards).toEqual({ reward: task.reward });
      expect(trial.exception_info ?? null).toBeNull();
      expect(trial.agent_result).toMatchObject({
        n_input_tokens: task.tokens_in,
        n_output_tokens: task.tokens_out,
        cost_usd: task.cost_usd,
      });
      expect(task.cost_usd).toBeGreaterThan(0);
      expect(trial.agent_info.model_info).toEqual({
        name: 'fake-model',
        provider: 'openai-compatible',
      });
      expect(await readFile(path.join(out, name, 'verifier', 'reward.txt'), 'utf8')).toBe(
        `${task.reward}\n`,
      );
      const trajectory = await readAtifTrajectoryFile(
        path.join(out, name, 'agent', 'trajectory.json'),
      );
      expect(trajectory.steps).toHaveLength(task.total_steps + 1);
      expect(trajectory.final_metrics?.total_cost_usd).toBeCloseTo(task.cost_usd!, 12);
    }

    const job = harborJobResultSchema.parse(await readJson(path.join(out, 'result.json')));
    expect(job.id).toBe(harborJobId(llmRunId));
    expect(job.n_total_trials).toBe(LLM_TASKS);
    const [evaluation, ...others] = Object.entries(job.stats.evals);
    expect(others).toEqual([]);
    expect(evaluation![0]).toBe(`${trials[0]!.agent_info.name}__fake-model__webshop`);
    const mean = tasks.reduce((sum, task) => sum + task.reward!, 0) / tasks.length;
    expect(evaluation![1].metrics).toEqual([{ mean: expect.closeTo(mean, 12) }]);
    // Who got which reward, as Harbor's reward_stats: every trial once.
    expect(Object.values(evaluation![1].reward_stats['reward']!).flat().sort()).toEqual(
      trials.map((trial) => trial.trial_name).sort(),
    );
    const config = harborJobConfigSchema.parse(await readJson(path.join(out, 'config.json')));
    expect(config.job_name).toBe('harbor-llm');
    expect(config.tasks).toHaveLength(LLM_TASKS);
  });

  it('writes the same files when exported again (names and ids are fixed by run and task)', async () => {
    const first = await exportHarbor(ruleRunId, 'rule-a');
    const second = await exportHarbor(ruleRunId, 'rule-b');
    const a = await trialsIn(first);
    const b = await trialsIn(second);
    expect(b.map((t) => [t.id, t.trial_name])).toEqual(a.map((t) => [t.id, t.trial_name]));
    // A rule agent uses no LLM: no tokens are claimed, and no model.
    for (const trial of a) {
      expect(trial.agent_result).not.toHaveProperty('n_input_tokens');
      expect(trial.agent_info.model_info ?? null).toBeNull();
    }
  });

  it("writes each epoch of a task as its own trial of the task, the job's n_attempts the run's epochs", async () => {
    const out = await exportHarbor(epochsRunId, 'epochs-job');
    const rows = await runRows.tasksOf(epochsRunId);
    expect(rows).toHaveLength(6);
    const trials = await trialsIn(out);
    expect(trials).toHaveLength(6);
    // Three trials a task, named by the benchmark's task id, each its own directory and id.
    const byTask = new Map<string, string[]>();
    for (const trial of trials)
      byTask.set(trial.task_name, [...(byTask.get(trial.task_name) ?? []), trial.trial_name]);
    expect([...byTask.keys()].sort()).toEqual(
      [...new Set(rows.map((row) => row.base_task_id))].sort(),
    );
    for (const names of byTask.values()) expect(new Set(names).size).toBe(3);
    expect(new Set(trials.map((trial) => trial.id)).size).toBe(6);
    for (const row of rows) {
      const trial = trials.find(
        (t) => t.trial_name === harborTrialName(epochsRunId, row.task_id, row.base_task_id),
      )!;
      expect(trial.verifier_result?.rewards).toEqual({ reward: row.reward });
    }
    const config = harborJobConfigSchema.parse(await readJson(path.join(out, 'config.json')));
    expect(config.n_attempts).toBe(3);
    expect(config.tasks).toHaveLength(2);
    const job = harborJobResultSchema.parse(await readJson(path.join(out, 'result.json')));
    expect(job.n_total_trials).toBe(6);
  });

  it('writes an OSWorld run with its screenshots beside the trajectory, and the agent-reported reward', async () => {
    const out = await exportHarbor(osworldRunId, 'osworld-job');
    const tasks = await runRows.tasksOf(osworldRunId);
    const trials = await trialsIn(out);
    expect(tasks.map((task) => [task.task_id, task.status]).sort()).toEqual([
      ['harbor-mail-help', 'failed'],
      ['harbor-os-done', 'success'],
    ]);
    for (const task of tasks) {
      const trial = trials.find((t) => t.task_name === task.task_id)!;
      expect(trial.verifier_result?.rewards?.['reward']).toBe(
        task.reward ?? (task.success ? 1 : 0),
      );
      const file = path.join(out, trial.trial_name, 'agent', 'trajectory.json');
      const images = atifImageParts(await readAtifTrajectoryFile(file));
      expect(images.length).toBeGreaterThan(0);
      for (const image of images) {
        const imageFile = atifImageFile(file, image.source.path)!;
        expect(imageFile.startsWith(path.join(out, trial.trial_name, 'agent', 'images'))).toBe(
          true,
        );
        expect((await readFile(imageFile)).subarray(1, 4).toString()).toBe('PNG');
      }
    }
  });

  it('refuses a directory that holds something else, in one line, exit 2', async () => {
    const result = await runCli(
      'scheduler',
      ['export', ruleRunId, '--format', 'harbor', '--out', path.join(process.cwd(), 'apps')],
      services.env,
      600_000,
    );
    expect(result.code).toBe(2);
    expect(result.stderr.trim().split('\n')).toHaveLength(1);
    expect(result.stderr).toContain('--out');
  });
});
