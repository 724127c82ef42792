import { copyFile, mkdir, mkdtemp, readFile, rename, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { TransientError } from '@benchfleet/core';
import {
  startFakeOsworldVm,
  startFakeWebServer,
  type FakeOsworldVm,
  type FakeWebServer,
} from '@benchfleet/testing';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DownloadCache } from '../downloads/download-cache.js';
import { finalSignalOf, FINAL_SIGNAL_MAPPING } from '../evaluate/final-signal.js';
import { SetupFailedError, VmServerUnreachableError } from './grading-errors.js';
import type { MetricFunction, PortedMetric } from '../metrics/metric-function.js';
import { prepareTask, type OsworldTaskSpec } from '../tasks/task-preparation.js';
import { OsworldVmServerClient } from '../vm-server/osworld-vm-server-client.js';
import {
  gradeTask,
  OSWORLD_GRADING_VERSION,
  regradeTask,
  setUpTask,
  type GradeOutcome,
  type GradingDesktop,
} from './task-grading.js';
import { pyFloat } from '../python/values.js';
import { PythonException } from '../python/exceptions.js';

// Test-only metrics for the synthetic file task (the real ports live in metrics/).
const sameText: MetricFunction = async ([result, expected]) => {
  if (result === null || typeof result !== 'string') return pyFloat(0);
  return pyFloat(
    (await readFile(result, 'utf8')) === (await readFile(String(expected), 'utf8')) ? 1 : 0,
  );
};
const listed: MetricFunction = async ([result, rules]) => {
  const text = await readFile(String(result), 'utf8');
  return pyFloat(
    (rules as { expect: string[] }).expect.every((line) => text.split('\n').includes(line)) ? 1 : 0,
  );
};
const metrics = (entries: Record<string, MetricFunction>): ReadonlyMap<string, PortedMetric> =>
  new Map(Object.entries(entries).map(([name, run]) => [name, { name, run, tolerance: 0 }]));

const examples = fileURLToPath(
  new URL('../../../../../shared/osworld/evaluation_examples/examples/', import.meta.url),
);
async function taskFile(domain: string, id: string): Promise<OsworldTaskSpec> {
  const file = JSON.parse(await readFile(`${examples}${domain}/${id}.json`, 'utf8')) as Record<
    string,
    unknown
  >;
  return {
    task_id: id,
    domain,
    related_apps: file['related_apps'] as string[],
    config: (file['config'] as unknown[] | undefined) ?? [],
    evaluator: file['evaluator'] as Record<string, unknown>,
  };
}

let vm: FakeOsworldVm;
let web: FakeWebServer;
let workDir: string;
let desktop: GradingDesktop;

beforeEach(async () => {
  vm = await startFakeOsworldVm({ apps: ['firefox', 'thunar', 'code'] });
  web = await startFakeWebServer();
  workDir = await mkdtemp(join(tmpdir(), 'task-grading-'));
  await mkdir(join(workDir, 'cache'));
  desktop = {
    vm: new OsworldVmServerClient({
      baseUrl: vm.url,
      retries: { controllerDelayMs: 0, probeDelayMs: 0, probeAttempts: 3 },
    }),
    downloads: new DownloadCache({
      root: join(workDir, 'downloads'),
      urlRewrites: web.urlRewrites,
      retryDelayMs: 0,
    }),
    cacheDir: join(workDir, 'cache'),
    screen: { width: 1280, height: 960 },
    clientPassword: 'password',
  };
});
afterEach(async () => {
  await vm.close();
  await web.close();
  await rm(workDir, { recursive: true, force: true });
});

function scored(outcome: GradeOutcome): { score: number; pythonType: string } {
  if (outcome.kind !== 'scored')
    throw new Error(`expected a score, got ${outcome.cause}: ${outcome.reason}`);
  return { score: outcome.score, pythonType: outcome.pythonType };
}

describe('grading os/5ea617a3 ("recover the poster from the Trash") on the fake desktop', () => {
  const posterUrl =
    'https://huggingface.co/datasets/xlangai/ubuntu_osworld_file_cache/resolve/main/os/5ea617a3-0e86-4ba6-aab2-dac9aa2e8d57/poster_party_night.webp';

  async function setUp() {
    // The real ported exact_match, from the registry.
    const task = prepareTask(await taskFile('os', '5ea617a3-0e86-4ba6-aab2-dac9aa2e8d57'));
    expect(task.fidelity).toEqual({ level: 'graded' });
    web.serve(posterUrl, 'RIFF....WEBP');
    const setup = await setUpTask(task, desktop);
    expect(setup.downloads).toEqual([
      expect.objectContaining({
        url: posterUrl,
        path: '/home/user/Desktop/poster_party_night.webp',
        size: 12,
        fromCache: false,
      }),
    ]);
    // The setup moved the poster to the desktop's Trash (gio trash), as the task intends.
    expect(await vm.exists('/home/user/Desktop/poster_party_night.webp')).toBe(false);
    expect(await vm.exists('~/.local/share/Trash/files/poster_party_night.webp')).toBe(true);
    return task;
  }

  it('an agent that restores the file: setup → agent → getters → metric → 1.0, with the inputs recorded', async () => {
    const task = await setUp();
    await rename(
      vm.localPath('~/.local/share/Trash/files/poster_party_night.webp'),
      vm.localPath('~/Desktop/poster_party_night.webp'),
    );
    const outcome = await gradeTask(task, desktop, finalSignalOf('COMPLETED'));
    expect(scored(outcome)).toEqual({ score: 1, pythonType: 'float' });
    expect(outcome.metricVersion).toBe(OSWORLD_GRADING_VERSION);
    expect(outcome.details.finalSignal).toEqual({
      action: 'DONE',
      bytebotStatus: 'COMPLETED',
      mapping: FINAL_SIGNAL_MAPPING,
    });
    expect(outcome.details.trace).toEqual([
      { kind: 'postconfig', steps: 0 },
      {
        kind: 'getter',
        slot: { side: 'result', index: null },
        type: 'vm_command_line',
        config: task.evaluator['result'],
        output: 'File exists.\n',
      },
      {
        kind: 'getter',
        slot: { side: 'expected', index: null },
        type: 'rule',
        config: task.evaluator['expected'],
        output: { expected: 'File exists.\n' },
      },
      {
        kind: 'metric',
        index: null,
        name: 'exact_match',
        args: ['File exists.\n', { expected: 'File exists.\n' }],
        options: {},
        value: pyFloat(1),
      },
    ]);
  });

  it('an agent that lies (COMPLETED, file still in the Trash) scores 0.0', async () => {
    const task = await setUp();
    const outcome = await gradeTask(task, desktop, finalSignalOf('COMPLETED'));
    expect(scored(outcome)).toEqual({ score: 0, pythonType: 'float' });
  });

  it('a setup download that fails is an infra fault of the attempt, and nothing is scored', async () => {
    const task = prepareTask(await taskFile('os', '5ea617a3-0e86-4ba6-aab2-dac9aa2e8d57'));
    web.serve(posterUrl, 'RIFF....WEBP');
    web.failNext(posterUrl, 3, 502);
    const error = await setUpTask(task, desktop).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(SetupFailedError);
    expect(error).toBeInstanceOf(TransientError);
    expect((error as Error).message).toMatch(
      /^Setup step 1 failed: _download_setup - download of .* failed: HTTP 502$/,
    );
    expect(vm.count('execute')).toBe(0);
  });
});

describe('the infeasible os/b3d4a89c answered both ways', () => {
  it('NEEDS_HELP maps to FAIL and scores int 1; COMPLETED (DONE) scores int 0; postconfig (the probe) runs first', async () => {
    const task = prepareTask(await taskFile('os', 'b3d4a89c-53f2-4d6b-8b6a-541fb5d205fa'), {
      metrics: new Map(),
    });
    expect(task).toMatchObject({ infeasible: true, fidelity: { level: 'graded' } });
    await setUpTask(task, desktop);
    const gaveUp = await gradeTask(task, desktop, finalSignalOf('NEEDS_HELP'));
    expect(scored(gaveUp)).toEqual({ score: 1, pythonType: 'int' });
    expect(gaveUp.details.finalSignal.action).toBe('FAIL');
    const claimed = await gradeTask(task, desktop, finalSignalOf('COMPLETED'));
    expect(scored(claimed)).toEqual({ score: 0, pythonType: 'int' });
    expect(scored(await gradeTask(task, desktop, finalSignalOf('CANCELLED')))).toEqual({
      score: 0,
      pythonType: 'int',
    });
    expect(vm.count('terminal')).toBe(3 + 1);
  });
});

/**
 * multi_apps/f918266a's id (a phase-1 task) with a spec built for the test: download, the agent's
 * edit, postconfig with a stdout capture, and a list of two metrics over vm_file, cloud_file,
 * cache_file and rule getters.
 */
function fileTask(overrides: Partial<Record<string, unknown>> = {}): OsworldTaskSpec {
  return {
    task_id: 'f918266a-b3e0-4914-865d-4faa564f1aef',
    domain: 'multi_apps',
    config: [
      {
        type: 'download',
        parameters: {
          files: [{ url: 'https://files.example/in.txt', path: '/home/user/Desktop/in.txt' }],
        },
      },
      { type: 'execute', parameters: { command: ['mkdir', '-p', '/home/user/Desktop/out'] } },
      { type: 'launch', parameters: { command: ['code', '/home/user/Desktop/in.txt'] } },
    ],
    evaluator: {
      postconfig: [
        {
          type: 'execute',
          parameters: { command: ['ls', '/home/user/Desktop/out'], stdout: 'out.ls' },
        },
      ],
      func: ['same_text', 'listed'],
      result: [
        { type: 'vm_file', path: '/home/user/Desktop/out/result.txt', dest: 'result.txt' },
        { type: 'cache_file', path: 'out.ls' },
      ],
      expected: [
        { type: 'cloud_file', path: 'https://files.example/gold.txt', dest: 'gold.txt' },
        { type: 'rule', rules: { expect: ['result.txt'] } },
      ],
      ...overrides,
    },
  };
}

describe('a whole task over files: setup, the agent’s edit, postconfig, four getters, two metrics', () => {
  const fileMetrics = metrics({ same_text: sameText, listed });

  beforeEach(() => {
    web.serve('https://files.example/in.txt', 'hello');
    web.serve('https://files.example/gold.txt', 'HELLO\n');
  });

  it('scores the mean of the metrics and keeps the end state: the files the getters fetched and the capture', async () => {
    const task = prepareTask(fileTask(), { metrics: fileMetrics });
    await setUpTask(task, desktop);
    await expect.poll(() => vm.appRuns()).toEqual([['code', '/home/user/Desktop/in.txt']]);
    await vm.writeFile('/home/user/Desktop/out/result.txt', 'HELLO\n');
    const outcome = await gradeTask(task, desktop, finalSignalOf('COMPLETED'), {
      metrics: fileMetrics,
    });
    expect(scored(outcome)).toEqual({ score: 1, pythonType: 'float' });
    expect(outcome.endStateFiles.map((file) => file.name)).toEqual([
      'gold.txt',
      'out.ls',
      'result.txt',
    ]);
    expect(outcome.details.postconfig).toEqual([
      { number: 1, type: 'execute', outcome: 'done', captures: ['out.ls'] },
    ]);
    const metricInputs = outcome.details.trace
      .filter((event) => event.kind === 'metric')
      .map((event) => event.args);
    expect(metricInputs).toEqual([
      ['<CACHE>/result.txt', '<CACHE>/gold.txt'],
      ['<CACHE>/out.ls', { expect: ['result.txt'] }],
    ]);
  });

  it('regrade re-scores from the saved files without a desktop, with the metrics of now', async () => {
    const task = prepareTask(fileTask(), { metrics: fileMetrics });
    await setUpTask(task, desktop);
    await vm.writeFile('/home/user/Desktop/out/result.txt', 'HELLO\n');
    const original = await gradeTask(task, desktop, finalSignalOf('COMPLETED'), {
      metrics: fileMetrics,
    });
    const restored = join(workDir, 'restored');
    for (const file of original.endStateFiles) {
      await mkdir(dirname(join(restored, file.name)), { recursive: true });
      await copyFile(join(desktop.cacheDir, file.name), join(restored, file.name));
    }
    await vm.kill();
    const again = await regradeTask(task, original.details, {
      cacheDir: restored,
      metrics: fileMetrics,
    });
    expect(scored(again)).toEqual({ score: 1, pythonType: 'float' });
    expect(again.endStateFiles).toEqual(original.endStateFiles);
    // A "fixed" metric changes the score without touching the desktop.
    const stricter = metrics({ same_text: () => pyFloat(0.5), listed });
    expect(
      scored(await regradeTask(task, original.details, { cacheDir: restored, metrics: stricter })),
    ).toEqual({
      score: 0.75,
      pythonType: 'float',
    });
  });

  it('regrade cannot replay a getter the original evaluation never reached (an `and` shortcut)', async () => {
    const task = prepareTask(fileTask(), { metrics: fileMetrics });
    await setUpTask(task, desktop);
    await vm.writeFile('/home/user/Desktop/out/result.txt', 'wrong');
    const original = await gradeTask(task, desktop, finalSignalOf('COMPLETED'), {
      metrics: fileMetrics,
    });
    expect(scored(original)).toEqual({ score: 0, pythonType: 'int' });
    const lenient = metrics({ same_text: () => pyFloat(1), listed });
    const again = await regradeTask(task, original.details, {
      cacheDir: desktop.cacheDir,
      metrics: lenient,
    });
    expect(again).toMatchObject({
      kind: 'no_score',
      cause: 'not_replayable',
      reason: 'getter cache_file (result 1) did not run in the saved grading',
    });
  });

  it('a getter’s file missing: vm_file gives None and the metric’s rule decides (0); a FileNotFoundError scores int 0', async () => {
    const task = prepareTask(fileTask(), { metrics: fileMetrics });
    await setUpTask(task, desktop);
    const missing = await gradeTask(task, desktop, finalSignalOf('COMPLETED'), {
      metrics: fileMetrics,
    });
    expect(scored(missing)).toEqual({ score: 0, pythonType: 'int' });
    const metricCall = missing.details.trace.find((event) => event.kind === 'metric');
    expect(metricCall).toMatchObject({
      name: 'same_text',
      args: [null, '<CACHE>/gold.txt'],
      value: pyFloat(0),
    });

    const intoMissingFolder = prepareTask(
      fileTask({
        func: 'same_text',
        result: { type: 'vm_file', path: '/home/user/Desktop/in.txt', dest: 'no/such/dir.txt' },
        expected: { type: 'rule', rules: {} },
      }),
      { metrics: fileMetrics },
    );
    expect(
      scored(
        await gradeTask(intoMissingFolder, desktop, finalSignalOf('COMPLETED'), {
          metrics: fileMetrics,
        }),
      ),
    ).toEqual({
      score: 0,
      pythonType: 'int',
    });
  });

  it('the VM server dying mid-evaluation is infra (never a score), with the error to rethrow', async () => {
    const task = prepareTask(fileTask(), { metrics: fileMetrics });
    await setUpTask(task, desktop);
    await vm.writeFile('/home/user/Desktop/out/result.txt', 'HELLO\n');
    vm.dieOn('file');
    const outcome = await gradeTask(task, desktop, finalSignalOf('COMPLETED'), {
      metrics: fileMetrics,
    });
    expect(outcome).toMatchObject({ kind: 'no_score', cause: 'infra' });
    expect(outcome.kind === 'no_score' && outcome.error).toBeInstanceOf(VmServerUnreachableError);
    expect(outcome.details.trace.map((event) => event.kind)).toEqual(['postconfig']);
  });

  it('an exception out of evaluate is no score with its reason; an unported metric leaves the task ungraded', async () => {
    const raising = metrics({
      same_text: () => {
        throw new PythonException(
          'TypeError',
          'expected str, bytes or os.PathLike object, not NoneType',
        );
      },
      listed,
    });
    const task = prepareTask(fileTask(), { metrics: raising });
    await setUpTask(task, desktop);
    expect(
      await gradeTask(task, desktop, finalSignalOf('COMPLETED'), { metrics: raising }),
    ).toMatchObject({
      kind: 'no_score',
      cause: 'exception',
      reason: 'TypeError: expected str, bytes or os.PathLike object, not NoneType',
    });

    const unported = prepareTask(fileTask(), { metrics: metrics({ same_text: sameText }) });
    const requestsBefore = vm.requests.length;
    expect(
      await gradeTask(unported, desktop, finalSignalOf('COMPLETED'), {
        metrics: metrics({ same_text: sameText }),
      }),
    ).toMatchObject({
      kind: 'no_score',
      cause: 'ungraded',
      reason: "metric 'listed' is not ported",
      fidelity: { level: 'ungraded' },
    });
    expect(vm.requests.length).toBe(requestsBefore);
  });

  it('a FAIL on a feasible task scores int 0 after postconfig, without running a getter', async () => {
    const task = prepareTask(fileTask(), { metrics: fileMetrics });
    await setUpTask(task, desktop);
    await vm.writeFile('/home/user/Desktop/out/result.txt', 'HELLO\n');
    const outcome = await gradeTask(task, desktop, finalSignalOf('NEEDS_HELP'), {
      metrics: fileMetrics,
    });
    expect(scored(outcome)).toEqual({ score: 0, pythonType: 'int' });
    expect(outcome.details.trace).toEqual([{ kind: 'postconfig', steps: 1 }]);
    expect(outcome.endStateFiles.map((file) => file.name)).toEqual(['out.ls']);
  });
});

describe('multi_apps/9219480b (fix the tetris bug): check_python_file_by_test_suite in the desktop’s python3', () => {
  const base =
    'https://huggingface.co/datasets/xlangai/ubuntu_osworld_file_cache/resolve/main/multi_apps/9219480b-3aed-47fc-8bac-d2cffc5849f7/';
  // Stand-ins for the task's files: the test suite imports the agent's tetris.py from its folder.
  const testSuite = 'from tetris import rotate\n\ndef test():\n    return rotate(3) == 0\n';

  it('the real metric imports the agent’s files fetched into the cache dir; the fix scores 1.0, the bug 0.0', async () => {
    for (const name of ['block.py', 'main.py', 'settings.py'])
      web.serve(base + name, `# ${name}\n`);
    web.serve(base + 'tetris.py', 'def rotate(n):\n    return [0, 1, 2][n + 1]\n');
    web.serve(base + 'test.py', testSuite);
    const task = prepareTask(await taskFile('multi_apps', '9219480b-3aed-47fc-8bac-d2cffc5849f7'));
    expect(task.fidelity).toEqual({ level: 'graded' });
    await setUpTask(task, desktop);
    const buggy = await gradeTask(task, desktop, finalSignalOf('COMPLETED'));
    expect(scored(buggy)).toEqual({ score: 0, pythonType: 'float' });

    await rm(desktop.cacheDir, { recursive: true });
    await mkdir(desktop.cacheDir);
    await vm.writeFile(
      '/home/user/Desktop/tetris/tetris.py',
      'def rotate(n):\n    return (n + 1) % 4\n',
    );
    const fixed = await gradeTask(task, desktop, finalSignalOf('COMPLETED'));
    expect(scored(fixed)).toEqual({ score: 1, pythonType: 'float' });
    expect(fixed.endStateFiles.map((file) => file.name)).toEqual([
      'block.py',
      'main.py',
      'settings.py',
      'test_suite.py',
      'tetris.py',
    ]);
    // The suite ran on the desktop: the cache dir was uploaded to a temp dir there, then removed.
    expect(
      vm.requests.some(
        (request) =>
          request.endpoint === 'upload' && /benchfleet-python/.test(JSON.stringify(request.body)),
      ),
    ).toBe(true);
  });
});
