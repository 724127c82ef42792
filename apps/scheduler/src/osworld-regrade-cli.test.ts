import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { zipSync } from 'fflate';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FileArtifactStore } from '@benchfleet/artifacts';
import { RunsRepository, TasksRepository } from '@benchfleet/db';
import {
  BytebotClient,
  BytebotDesktopClient,
  BYTEBOT_SCREEN,
  OsworldGradesRepository,
  runGradedOsworldTask,
  setupRecordOf,
  type OsworldTask,
} from '@benchfleet/osworld';
import {
  DownloadCache,
  OSWORLD_GRADING_VERSION,
  OsworldVmServerClient,
} from '@benchfleet/osworld-grading';
import {
  runCli,
  startFakeGradedStack,
  useTestServices,
  type FakeBytebotScenario,
} from '@benchfleet/testing';

// `scheduler regrade RUN`, run as a user runs it, over grades the real graded flow made on the
// fakes (reset → setup → agent → getters → metric), recorded as an older port's. The desktop is
// gone by then: the command scores the saved end-state files again.

const services = useTestServices();
const examples = fileURLToPath(
  new URL('../../../../shared/osworld/evaluation_examples/examples/', import.meta.url),
);
const model = { provider: 'proxy', name: 'fake-model', title: 'Fake', contextWindow: 128_000 };
const RUN = 'regrade-cli-run';
const CALCULATOR = 'f918266a-b3e0-4914-865d-4faa564f1aef';
const POSTER = '5ea617a3-0e86-4ba6-aab2-dac9aa2e8d57';
const OLD_VERSION = 'osworld-grading/1';
const scenarios: Record<string, FakeBytebotScenario> = {
  [CALCULATOR]: {
    steps: 2,
    ending: { kind: 'completed', answer: 'Saved log.txt.' },
    desktopCommands: { 2: 'cd ~/Desktop && python3 calculator.py > log.txt' },
  },
  // The agent lies: it did nothing and says COMPLETED.
  [POSTER]: { steps: 1, ending: { kind: 'completed', answer: 'Recovered.' } },
};
let workDir: string;

async function specOf(domain: string, id: string): Promise<OsworldTask> {
  const file = JSON.parse(await readFile(`${examples}${domain}/${id}.json`, 'utf8')) as Record<
    string,
    unknown
  >;
  return {
    task_id: id,
    domain,
    instruction: String(file['instruction']),
    snapshot: String(file['snapshot']),
    related_apps: file['related_apps'] as string[],
    source: file['source'] as string,
    config: (file['config'] as OsworldTask['config'] | undefined) ?? [],
    evaluator: file['evaluator'] as Record<string, unknown>,
    trajectory: String(file['trajectory']),
    proxy: Boolean(file['proxy']),
    fixed_ip: Boolean(file['fixed_ip']),
    possibility_of_env_change: String(file['possibility_of_env_change']),
  };
}

beforeAll(async () => {
  workDir = await mkdtemp(join(tmpdir(), 'regrade-cli-'));
  const artifacts = new FileArtifactStore(join(workDir, 'artifacts'));
  const fakes = await startFakeGradedStack({ scenario: { steps: 0, ending: { kind: 'silent' } } });
  const base = `https://huggingface.co/datasets/xlangai/ubuntu_osworld_file_cache/resolve/main/multi_apps/${CALCULATOR}/`;
  fakes.web.serve(
    `${base}calculator.zip`,
    Buffer.from(zipSync({ 'calculator.py': Buffer.from('print(6 * 7)\n') })),
  );
  fakes.web.serve(`${base}log_Gold.txt`, '42\n');
  fakes.web.serve(
    `https://huggingface.co/datasets/xlangai/ubuntu_osworld_file_cache/resolve/main/os/${POSTER}/poster_party_night.webp`,
    'RIFF....WEBP',
  );
  const specs = [await specOf('multi_apps', CALCULATOR), await specOf('os', POSTER)];
  await new RunsRepository(services.db).createWithTasks({
    run: {
      id: RUN,
      name: RUN,
      benchmark: 'osworld',
      code_version: 'test',
      config: JSON.stringify({ grade: true }),
    },
    tasks: specs.map((spec, seq) => ({
      task_id: spec.task_id,
      seq,
      domain: spec.domain,
      instruction: spec.instruction,
      spec: JSON.stringify(spec),
    })),
  });
  await new RunsRepository(services.db).createWithTasks({
    run: {
      id: 'ungraded-run',
      name: 'u',
      benchmark: 'osworld',
      code_version: 'test',
      config: '{}',
    },
    tasks: [{ task_id: 't1', seq: 0, domain: 'os', instruction: 'x', spec: '{}' }],
  });
  const grades = new OsworldGradesRepository(services.db);
  try {
    for (const spec of specs) {
      await new TasksRepository(services.db).openAttempt(RUN, spec.task_id, 'stack-1', 1);
      fakes.setScenario(scenarios[spec.task_id]!);
      const result = await runGradedOsworldTask({
        stack: {
          client: new BytebotClient({ baseUrl: fakes.bytebot.url, retryDelaysMs: [5, 10, 20] }),
          desktop: new BytebotDesktopClient(fakes.bytebotd.url),
          vm: new OsworldVmServerClient({
            baseUrl: fakes.vm.url,
            retries: { controllerDelayMs: 0, probeDelayMs: 0 },
          }),
          downloads: new DownloadCache({
            root: join(workDir, 'downloads'),
            urlRewrites: fakes.web.urlRewrites,
            retryDelayMs: 0,
          }),
          artifacts,
          resetCommand: fakes.resetCommand,
          cacheRoot: join(workDir, 'grading'),
          screen: BYTEBOT_SCREEN,
          clientPassword: 'password',
          deadlines: { readyIntervalMs: 10 },
        },
        task: spec,
        attempt: { runId: RUN, taskId: spec.task_id, attempt: 1 },
        episode: {
          model,
          pollIntervalMs: 20,
          idlePollIntervalMs: 10,
          sink: { onTaskCreated: () => undefined, onStep: () => undefined },
        },
        signal: AbortSignal.timeout(60_000),
      });
      // The older port believed the liar: its poster grade says 1.
      const grade =
        spec.task_id === POSTER
          ? { ...result.grade, score: 1, pythonType: 'float' as const, gradedSuccess: true }
          : result.grade;
      await grades.recordAttemptGrade(
        { runId: RUN, taskId: spec.task_id, attempt: 1 },
        { ...grade, metricVersion: OLD_VERSION },
        setupRecordOf(result),
      );
      await new TasksRepository(services.db).settle(RUN, spec.task_id, 1, {
        status: result.episode.status,
        finalApiStatus: result.episode.final_api_status,
        totalSteps: result.episode.total_steps,
        durationMs: result.episode.duration_ms,
      });
    }
  } finally {
    await fakes.close();
  }
});

afterAll(async () => {
  await rm(workDir, { recursive: true, force: true });
});

const scheduler = (args: string[]) => runCli('scheduler', args, services.env, 120_000);

describe('scheduler regrade RUN', () => {
  it('scores the saved end states again, prints each change and a total, and records the metric version', async () => {
    const result = await scheduler(['regrade', RUN]);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(result.stdout.trim().split('\n')).toEqual([
      `run ${RUN}: scored again with ${OSWORLD_GRADING_VERSION}`,
      `  = ${CALCULATOR}: 1 (grade 2)`,
      `  ~ ${POSTER}: 1 -> 0 (grade 2)`,
      '2 regraded (1 changed, 1 unchanged), 0 up to date, 0 not graded; mean score 1 -> 0.5',
    ]);
    const latest = await new OsworldGradesRepository(services.db).taskGrades(RUN);
    expect(latest.map((row) => [row.task_id, row.grade_no, row.metric_version, row.score])).toEqual(
      [
        [CALCULATOR, 2, OSWORLD_GRADING_VERSION, 1],
        [POSTER, 2, OSWORLD_GRADING_VERSION, 0],
      ],
    );

    // Again: nothing to add; `scheduler osworld regrade` is the same command.
    const again = await scheduler(['osworld', 'regrade', RUN]);
    expect(again.code).toBe(0);
    expect(again.stdout.trim().split('\n').at(-1)).toBe(
      '0 regraded (0 changed, 0 unchanged), 2 up to date, 0 not graded; mean score 0.5 -> 0.5',
    );

    // --force, one task, as JSON.
    const forced = await scheduler(['regrade', RUN, '--task', POSTER, '--force', '--json']);
    expect(forced.code).toBe(0);
    expect(JSON.parse(forced.stdout)).toMatchObject({
      runId: RUN,
      metricVersion: OSWORLD_GRADING_VERSION,
      tasks: [{ taskId: POSTER, outcome: 'regraded', gradeNo: 3, after: { score: 0 } }],
    });
  });

  it('is the OSWorld case of `scheduler rescore RUN`, which routes to it', async () => {
    const result = await scheduler(['rescore', RUN, '--json']);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({
      runId: RUN,
      metricVersion: OSWORLD_GRADING_VERSION,
      tasks: [
        { taskId: CALCULATOR, outcome: 'up_to_date' },
        { taskId: POSTER, outcome: 'up_to_date' },
      ],
    });
    const bad = await scheduler(['rescore', RUN, '--task', 'nope']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--task nope: run regrade-cli-run has no such task/);
  });

  it('bad RUN: one line, exit 2, nothing written', async () => {
    const before = await services.db
      .selectFrom('osworld_grades' as never)
      .selectAll()
      .execute();
    for (const [args, says] of [
      [['regrade', 'no-such-run'], /run no-such-run not found; `scheduler runs` lists the runs/],
      [
        ['regrade', 'ungraded-run'],
        /run ungraded-run has no grade to score again: it was enqueued without --grade/,
      ],
      [['regrade', RUN, '--task', 'nope'], /--task nope: run regrade-cli-run has no such task/],
      [['osworld', 'regrade', 'no-such-run'], /run no-such-run not found/],
    ] as const) {
      const result = await scheduler([...args]);
      expect(result.code, args.join(' ')).toBe(2);
      expect(result.stderr.trim().split('\n')).toHaveLength(1);
      expect(result.stderr).toMatch(says);
    }
    expect(
      await services.db
        .selectFrom('osworld_grades' as never)
        .selectAll()
        .execute(),
    ).toEqual(before);
  });
});
