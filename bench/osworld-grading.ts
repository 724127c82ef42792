// Graded OSWorld on the fakes: what grading adds per task (setup + evaluation, the reset excluded)
// and whether graded runs scale with stacks, side by side with ungraded runs.
//
//   npx tsx bench/osworld-grading.ts [--tasks-per-stack 6] [--stacks 1,4] [--steps 4] [--step-interval-ms 1000] [--real-python]
//
// The library flow is driven directly (`runGradedOsworldTask` of @benchfleet/osworld, and
// `runOsworldEpisode` for the ungraded runs): the worker's wiring of grading comes after the
// structural refactor (issue 21), so no worker process, queue or Postgres is involved here.
// Each stack is a fake Bytebot agent, its bytebotd and a fake OSWorld VM server sharing one sandbox
// (`startFakeGradedStack`); all stacks share one fake web host for the downloads. The tasks are
// real phase-1 tasks whose setup runs in a sandbox, each done right by a scripted agent:
//   os/5ea617a3 (download, gio trash, a pyautogui one-liner; exact_match over vm_command_line),
//   os/6f56bf42 (setup.sh, postconfig eval.sh, stand-ins served by the fake host; check_include_exclude),
//   multi_apps/f918266a (a zip, unzip; compare_text_file over vm_file and cloud_file),
//   os/b3d4a89c (infeasible, answered NEEDS_HELP).
// Targets (issue 22): grading overhead p95 ≤ 5 s per task; graded 4 stacks ≥ 0.95 × 4 × one stack.
//
// On a real fleet each desktop runs its commands on its own CPUs; here every fake desktop runs them
// on this machine's cores, beside the flow and the fakes' servers. So the desktop's `python` (the
// pyautogui one-liners of setup, which cannot click anything on a fake desktop) is a stand-in that
// exits 0, unless --real-python; the CPU columns show this process's CPU per task (the flow and the
// fakes' servers) apart from the fake desktops' (the commands setup, the agent and the getters run).

import { readFileSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { zipSync } from 'fflate';
import { FileArtifactStore } from '@benchfleet/artifacts';
import {
  BYTEBOT_SCREEN,
  BytebotClient,
  BytebotDesktopClient,
  runGradedOsworldTask,
  runOsworldEpisode,
  type RunGradedOsworldTaskOptions,
} from '@benchfleet/osworld';
import { DownloadCache, OsworldVmServerClient } from '@benchfleet/osworld-grading';
import {
  startFakeGradedStack,
  startFakeWebServer,
  type FakeBytebotScenario,
  type FakeGradedStack,
  type FakeWebServer,
} from '@benchfleet/testing';

type Mode = 'ungraded' | 'graded';
type TaskInput = RunGradedOsworldTaskOptions['task'];

interface BenchOptions {
  realPython: boolean;
  tasksPerStack: number;
  stackCounts: number[];
  steps: number;
  stepIntervalMs: number;
}

interface PlannedTask {
  task: TaskInput;
  scenario: FakeBytebotScenario;
}

interface TaskTiming {
  /** setup + evaluation (graded only). */
  gradingMs: number;
  agentMs: number;
  resetMs: number;
  score: number | null;
}

interface ModeResult {
  mode: Mode;
  stacks: number;
  tasks: number;
  wallMs: number;
  timings: TaskTiming[];
  /** CPU of this process (the flow and the fakes' servers) and of the fake desktops' commands. */
  ownCpuMs: number;
  desktopCpuMs: number;
}

const HF = 'https://huggingface.co/datasets/xlangai/ubuntu_osworld_file_cache/resolve/main/';
const examples = new URL('../../shared/osworld/evaluation_examples/examples/', import.meta.url);
const model = { provider: 'proxy', name: 'fake-model', title: 'Fake', contextWindow: 128_000 };

function parseOptions(argv: string[]): BenchOptions {
  const { values } = parseArgs({
    args: argv,
    options: {
      'tasks-per-stack': { type: 'string', default: '6' },
      stacks: { type: 'string', default: '1,4' },
      steps: { type: 'string', default: '4' },
      // A model turn of a second: a real one takes several. Much shorter turns make the agent
      // nearly free, and then the fake desktops' and servers' CPU on a busy machine is measured.
      'step-interval-ms': { type: 'string', default: '1000' },
      'real-python': { type: 'boolean', default: false },
    },
  });
  const positive = (name: string, raw: string): number => {
    const value = Number(raw);
    if (!Number.isInteger(value) || value < 1)
      throw new Error(`--${name} must be a positive integer, got "${raw}"`);
    return value;
  };
  return {
    realPython: values['real-python'],
    tasksPerStack: positive('tasks-per-stack', values['tasks-per-stack']),
    stackCounts: values.stacks.split(',').map((count) => positive('stacks', count.trim())),
    steps: positive('steps', values.steps),
    stepIntervalMs: positive('step-interval-ms', values['step-interval-ms']),
  };
}

async function datasetTask(domain: string, id: string): Promise<TaskInput> {
  const file = JSON.parse(
    await readFile(new URL(`${domain}/${id}.json`, examples), 'utf8'),
  ) as Record<string, unknown>;
  return {
    task_id: id,
    domain,
    instruction: String(file['instruction']),
    related_apps: file['related_apps'] as string[],
    config: (file['config'] as unknown[] | undefined) ?? [],
    evaluator: file['evaluator'] as Record<string, unknown>,
  };
}

/** The four tasks, each with an agent that does it right, and the files the fake host serves. */
async function taskMix(web: FakeWebServer, steps: number): Promise<PlannedTask[]> {
  const poster = '5ea617a3-0e86-4ba6-aab2-dac9aa2e8d57';
  web.serve(`${HF}os/${poster}/poster_party_night.webp`, 'RIFF....WEBPVP8 poster');
  const copies = '6f56bf42-85b8-4fbb-8e06-6c44960184ba';
  web.serve(
    `${HF}os/${copies}/setup.sh`,
    '#!/bin/sh\nmkdir -p dir1 dir2 dir3\necho data > file1\n',
  );
  web.serve(
    `${HF}os/${copies}/eval.sh`,
    '#!/bin/sh\nfor d in dir1 dir2 dir3; do\n  if [ -f "$d/file1" ]; then echo "Success: file1 exists in $d."; else echo "Failure: file1 missing in $d."; fi\ndone\n',
  );
  const calculator = 'f918266a-b3e0-4914-865d-4faa564f1aef';
  web.serve(
    `${HF}multi_apps/${calculator}/calculator.zip`,
    Buffer.from(zipSync({ 'calculator.py': Buffer.from('print(6 * 7)\n') })),
  );
  web.serve(`${HF}multi_apps/${calculator}/log_Gold.txt`, '42\n');
  const doing = (command: string): FakeBytebotScenario => ({
    steps,
    ending: { kind: 'completed', answer: 'Done.' },
    desktopCommands: { [Math.min(2, steps)]: command },
  });
  return [
    {
      task: await datasetTask('os', poster),
      scenario: doing(
        'mv ~/.local/share/Trash/files/poster_party_night.webp ~/Desktop/poster_party_night.webp',
      ),
    },
    {
      task: await datasetTask('os', copies),
      scenario: doing('for d in dir1 dir2 dir3; do cp file1 "$d/"; done'),
    },
    {
      task: await datasetTask('multi_apps', calculator),
      scenario: doing('cd ~/Desktop && python3 calculator.py > log.txt'),
    },
    {
      task: await datasetTask('os', 'b3d4a89c-53f2-4d6b-8b6a-541fb5d205fa'),
      scenario: { steps, ending: { kind: 'needs_help', answer: 'This cannot be done here.' } },
    },
  ];
}

async function runMode(
  mode: Mode,
  stackCount: number,
  options: BenchOptions,
  workDir: string,
): Promise<ModeResult> {
  const web = await startFakeWebServer();
  const mix = await taskMix(web, options.steps);
  const stacks: FakeGradedStack[] = [];
  for (let i = 0; i < stackCount; i++)
    stacks.push(
      await startFakeGradedStack({
        scenario: mix[0]!.scenario,
        web,
        bytebot: { stepIntervalMs: options.stepIntervalMs, toolDelayMs: 5, pendingDelayMs: 10 },
      }),
    );
  const queue = Array.from(
    { length: stackCount * options.tasksPerStack },
    (_, index) => mix[index % mix.length]!,
  );
  const timings: TaskTiming[] = [];
  const modeDir = join(workDir, `${mode}-${stackCount}`);
  const started = Date.now();
  const ownCpuBefore = process.cpuUsage();
  const desktopCpuBefore = childrenCpuMs();
  try {
    await Promise.all(
      stacks.map(async (fakes, stackIndex) => {
        const client = new BytebotClient({ baseUrl: fakes.bytebot.url });
        const stack = {
          client,
          desktop: new BytebotDesktopClient(fakes.bytebotd.url),
          vm: new OsworldVmServerClient({ baseUrl: fakes.vm.url }),
          downloads: new DownloadCache({
            root: join(modeDir, `stack-${stackIndex}`, 'downloads'),
            urlRewrites: web.urlRewrites,
          }),
          artifacts: new FileArtifactStore(join(modeDir, 'artifacts')),
          resetCommand: fakes.resetCommand,
          cacheRoot: join(modeDir, `stack-${stackIndex}`, 'grading'),
          screen: BYTEBOT_SCREEN,
          clientPassword: 'password',
          deadlines: { readyIntervalMs: 50 },
        };
        const episode = {
          model,
          pollIntervalMs: 100,
          idlePollIntervalMs: 20,
          sink: { onTaskCreated: () => undefined, onStep: () => undefined },
        };
        let attempt = 0;
        for (let next = queue.shift(); next; next = queue.shift()) {
          fakes.setScenario(next.scenario);
          const signal = AbortSignal.timeout(120_000);
          if (mode === 'ungraded') {
            const agentStarted = Date.now();
            await runOsworldEpisode({
              ...episode,
              client,
              task: { task_id: next.task.task_id, instruction: next.task.instruction },
              signal,
            });
            timings.push({
              gradingMs: 0,
              agentMs: Date.now() - agentStarted,
              resetMs: 0,
              score: null,
            });
            continue;
          }
          const result = await runGradedOsworldTask({
            stack,
            task: next.task,
            attempt: {
              runId: `bench-${stackCount}`,
              taskId: next.task.task_id,
              attempt: ++attempt,
            },
            episode,
            signal,
          });
          timings.push({
            gradingMs: result.timings.setupMs + result.timings.gradeMs,
            agentMs: result.timings.agentMs,
            resetMs: result.timings.resetMs + result.timings.readyMs,
            score: result.grade.score,
          });
        }
      }),
    );
    const ownCpu = process.cpuUsage(ownCpuBefore);
    return {
      mode,
      stacks: stackCount,
      tasks: timings.length,
      wallMs: Date.now() - started,
      timings,
      ownCpuMs: (ownCpu.user + ownCpu.system) / 1000,
      desktopCpuMs: childrenCpuMs() - desktopCpuBefore,
    };
  } finally {
    for (const fakes of stacks) await fakes.close();
    await web.close();
  }
}

/** CPU of the processes this one started and waited for (`cutime` + `cstime` of /proc/self/stat). */
function childrenCpuMs(): number {
  const fields = readFileSync('/proc/self/stat', 'utf8').split(') ')[1]?.split(' ') ?? [];
  const ticksMs = 10; // USER_HZ is 100 on Linux
  return (Number(fields[13]) + Number(fields[14])) * ticksMs;
}

function percentile(values: number[], p: number): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

const options = parseOptions(process.argv.slice(2));
const workDir = await mkdtemp(join(tmpdir(), 'bench-osworld-grading-'));
if (!options.realPython) {
  // The fake desktops' commands find this `python` first (they inherit this process's PATH).
  await writeFile(join(workDir, 'python'), '#!/bin/sh\nexit 0\n', { mode: 0o755 });
  process.env['PATH'] = `${workDir}:${process.env['PATH'] ?? ''}`;
}
const results: ModeResult[] = [];
try {
  for (const mode of ['ungraded', 'graded'] as const)
    for (const stacks of options.stackCounts) {
      process.stderr.write(`running ${mode} on ${stacks} stack(s)…\n`);
      results.push(await runMode(mode, stacks, options, workDir));
    }
} finally {
  await rm(workDir, { recursive: true, force: true });
}

const rate = (result: ModeResult) => result.tasks / (result.wallMs / 1000);
const header = `${'mode'.padEnd(9)} ${'stacks'.padStart(6)} ${'tasks'.padStart(6)} ${'wall s'.padStart(8)} ${'tasks/s'.padStart(8)} ${'× 1 stack'.padStart(10)} ${'agent p50 ms'.padStart(13)} ${'grading p50/p95 ms'.padStart(19)} ${'reset p50/p95 ms'.padStart(17)} ${'CPU ms/task own+desktop'.padStart(24)} scores`;
console.log(
  `OSWorld grading on the fakes: ${options.tasksPerStack} tasks per stack, ${options.steps} agent steps of ${options.stepIntervalMs} ms, ${availableParallelism()} cores, desktop python ${options.realPython ? 'real' : 'stand-in'}`,
);
console.log(header);
for (const result of results) {
  const single = results.find((other) => other.mode === result.mode && other.stacks === 1);
  const grading = result.timings.map((timing) => timing.gradingMs);
  const resets = result.timings.map((timing) => timing.resetMs);
  const scores = new Map<string, number>();
  for (const timing of result.timings) {
    const key = timing.score === null ? '-' : String(timing.score);
    scores.set(key, (scores.get(key) ?? 0) + 1);
  }
  const graded = result.mode === 'graded';
  console.log(
    `${result.mode.padEnd(9)} ${String(result.stacks).padStart(6)} ${String(result.tasks).padStart(6)} ${(result.wallMs / 1000).toFixed(2).padStart(8)} ${rate(result).toFixed(2).padStart(8)} ${(single ? (rate(result) / rate(single)).toFixed(2) : '-').padStart(10)} ${String(
      percentile(
        result.timings.map((timing) => timing.agentMs),
        50,
      ),
    ).padStart(
      13,
    )} ${(graded ? `${percentile(grading, 50)}/${percentile(grading, 95)}` : '-').padStart(19)} ${(graded ? `${percentile(resets, 50)}/${percentile(resets, 95)}` : '-').padStart(17)} ${`${Math.round(result.ownCpuMs / result.tasks)}+${Math.round(result.desktopCpuMs / result.tasks)}`.padStart(24)} ${[...scores].map(([score, count]) => `${score}×${count}`).join(' ')}`,
  );
}
const gradedRuns = results.filter((result) => result.mode === 'graded');
const overheadP95 = percentile(
  gradedRuns.flatMap((result) => result.timings.map((timing) => timing.gradingMs)),
  95,
);
console.log(
  `grading overhead (setup + evaluation, reset excluded) p95: ${overheadP95} ms — target ≤ 5000 ms: ${overheadP95 <= 5_000 ? 'met' : 'NOT met'}`,
);
const one = gradedRuns.find((result) => result.stacks === 1);
const four = gradedRuns.find((result) => result.stacks === 4);
if (one && four) {
  const scaling = rate(four) / rate(one);
  console.log(
    `graded throughput, 4 stacks ÷ 1 stack: ${scaling.toFixed(2)} — target ≥ 3.80: ${scaling >= 3.8 ? 'met' : 'NOT met'}`,
  );
}
