import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OsworldGradesRepository, type OsworldTask } from '@benchfleet/osworld';
import {
  ensureDockerEngine,
  OSWORLD_TASK_SCRIPTS,
  osworldExampleTask,
  runCli,
  startCli,
  startFakeWebServer,
  startRealDesktop,
  startScriptedBytebot,
  useTestServices,
  waitFor,
  waitForOutput,
  writeOsworldTestDataset,
  type FakeWebServer,
  type RealDesktop,
  type ScriptedBytebot,
  type StartedProcess,
} from '@benchfleet/testing';

// Graded OSWorld on the real desktop image (deploy/desktop, built here or reused when its inputs
// are unchanged): bytebotd, XFCE and OSWorld's own VM server in a container the worker recreates
// before every task. The fleet path as a user runs it: `scheduler enqueue --grade` →
// `worker-osworld --desktop-url --desktop-server-url --reset-command` → grades in Postgres. The
// agent is a script (libs/testing real-desktop) acting through the real bytebotd: it opens a
// terminal and types. One task per phase-1 domain, each the right way (graded 1) and the wrong
// way while claiming success (graded 0).

const engine = await ensureDockerEngine();
if (!engine.available) process.stderr.write(`real-desktop tests skipped: ${engine.reason}\n`);

const services = useTestServices();
const log = (line: string) => process.stderr.write(`[real-desktop] ${line}\n`);
let desktop: RealDesktop;
let scratch: string;

/** The images may be built first: a fresh machine installs a whole desktop (see bench/README). */
const FIRST_BUILD_MS = 90 * 60_000;
/** Bounds that only catch a hang: a task is reset, set up, acted on and graded in about a minute. */
const RUN_MS = 20 * 60_000;

async function vmExecute(command: string[] | string, shell = false) {
  const response = await fetch(`${desktop.vmServerUrl}/setup/execute`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ command, shell }),
    signal: AbortSignal.timeout(120_000),
  });
  return (await response.json()) as { output?: string; error?: string; returncode?: number };
}

async function vmLaunch(command: string[]): Promise<void> {
  const response = await fetch(`${desktop.vmServerUrl}/setup/launch`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ command }),
    signal: AbortSignal.timeout(60_000),
  });
  expect(response.status, await response.text()).toBe(200);
}

describe.skipIf(!engine.available)('a real desktop', () => {
  beforeAll(async () => {
    scratch = await mkdtemp(path.join(tmpdir(), 'real-desktop-'));
    const started = await startRealDesktop({ name: 'fleet', log });
    if (!started.available) throw new Error(started.reason);
    desktop = started.desktop;
  }, FIRST_BUILD_MS);

  afterAll(async () => {
    await desktop?.close();
    if (scratch) await rm(scratch, { recursive: true, force: true });
  });

  describe('the image', () => {
    it('says in its label what it has, and has it: Chromium answers DevTools as the tasks launch Chrome', async () => {
      const { label } = desktop;
      expect(label.base.route).toBe('local');
      expect(label.screen).toBe('1280x960');
      for (const app of [
        'chromium',
        'thunderbird',
        'libreoffice-calc',
        'libreoffice-impress',
        'gimp',
        'vlc',
        'nautilus',
        'gnome-terminal',
      ])
        expect(label.apps[app], app).toMatch(/\d/);
      expect(label.apps).toMatchObject({ chrome: null, vscode: null });
      expect(label.substitutions).toContainEqual(
        expect.objectContaining({ for: 'google-chrome', by: 'chromium' }),
      );
      // Every command the label calls present is on the user's PATH, and every absent one is not.
      const listed = Object.entries(label.commands);
      const found = await desktop.exec(
        listed.map(([name]) => `command -v ${name} >/dev/null && echo ${name}`).join('; '),
      );
      expect(found.stdout.trim().split('\n').sort()).toEqual(
        listed
          .filter(([, where]) => where !== null)
          .map(([name]) => name)
          .sort(),
      );

      // As multi_apps and chrome tasks set Chrome up: launched through the VM server, then socat.
      await vmLaunch(['google-chrome', '--remote-debugging-port=1337']);
      await vmLaunch(['socat', 'tcp-listen:9222,fork', 'tcp:localhost:1337']);
      const version = await waitFor(
        'DevTools on the desktop port 9222',
        async () => {
          const answer = await fetch(`${desktop.devtoolsUrl}/json/version`, {
            signal: AbortSignal.timeout(5_000),
          }).catch(() => null);
          return answer?.ok ? ((await answer.json()) as { Browser: string }) : undefined;
        },
        120_000,
        500,
      );
      expect(version.Browser).toMatch(/^Chrome\/\d+/);
      // Chrome's own profile directory, which OSWorld's Chrome getters read.
      const profile = await vmExecute('ls ~/.config/google-chrome', true);
      expect(profile.output).toContain('Default');

      // The server's one-liners find pyautogui on the desktop's screen.
      const size = await vmExecute(['python', '-c', 'import pyautogui; print(pyautogui.size())']);
      expect(size.output?.trim()).toBe('Size(width=1280, height=960)');
    });

    it('a reset recreates the container from its image: nothing a task left survives', async () => {
      const left = await desktop.exec(
        'echo left > ~/left-behind.txt && mkdir -p ~/Desktop/leftover',
      );
      expect(left.code, left.stderr).toBe(0);
      const recreated = await new Promise<string>((resolve, reject) =>
        execFile('/bin/sh', ['-c', desktop.resetCommand], (error, stdout, stderr) =>
          error ? reject(new Error(`${error.message}: ${stderr}`)) : resolve(stdout),
        ),
      );
      expect(recreated).toMatch(
        /^recreated container benchfleet-desktop-fleet-\w+ \(\w{12} → \w{12}\)\n$/,
      );
      log(`reset, then ready in ${await desktop.waitUntilReady()} ms`);
      const after = await desktop.exec('ls ~/left-behind.txt ~/Desktop/leftover 2>&1; hostname');
      expect(after.stdout.match(/No such file or directory/g)).toHaveLength(2);
      expect(after.stdout.trim().split('\n').at(-1)).toBe('computer');
    });
  });

  describe('graded OSWorld on the real desktop, through the fleet', () => {
    let web: FakeWebServer;
    let agent: ScriptedBytebot;
    let worker: StartedProcess;
    let tasks: OsworldTask[];

    beforeAll(async () => {
      tasks = await Promise.all(
        OSWORLD_TASK_SCRIPTS.map((script) => osworldExampleTask(script.domain, script.taskId)),
      );
      web = await startFakeWebServer();
      for (const script of OSWORLD_TASK_SCRIPTS)
        for (const [url, body] of Object.entries((await script.downloads?.()) ?? {}))
          web.serve(url, body);
      agent = await startScriptedBytebot({
        desktop: { url: desktop.bytebotdUrl },
        check: async (test) => (await desktop.exec(test)).code === 0,
        tasks,
        scripts: OSWORLD_TASK_SCRIPTS,
      });
      worker = startCli(
        'worker-osworld',
        [
          '--bytebot-url',
          agent.bytebot.url,
          '--desktop-url',
          desktop.bytebotdUrl,
          '--desktop-server-url',
          desktop.vmServerUrl,
          '--reset-command',
          desktop.resetCommand,
          '--screen-size',
          desktop.label.screen ?? '1280x960',
          '--desktop-image',
          desktop.image,
          '--grading-cache',
          path.join(scratch, 'grading'),
          '--download-mirrors',
          web.urlRewrites.map((rewrite) => `${rewrite.from}=${rewrite.to}`).join(','),
          '--stack-id',
          'stack-real-desktop',
          '--grace-s',
          '5',
        ],
        {
          ...services.env,
          BENCHFLEET_ARTIFACTS: path.join(scratch, 'artifacts'),
          LOG_LEVEL: 'info',
        },
      );
      await waitForOutput(worker, 'worker ready', 'the graded worker to be ready', 120_000);
    }, 180_000);

    afterAll(async () => {
      if (worker && worker.child.exitCode === null && worker.child.signalCode === null) {
        worker.child.kill('SIGTERM');
        await worker.exited;
      }
      await agent?.close();
      await web?.close();
    });

    async function gradedRun(name: string): Promise<string> {
      const dataset = await writeOsworldTestDataset(scratch, name, tasks);
      const enqueued = await runCli(
        'scheduler',
        [
          'enqueue',
          '--benchmark',
          'osworld',
          '--dataset',
          dataset,
          '--grade',
          '--run-name',
          name,
          '--json',
        ],
        services.env,
      );
      expect(enqueued.code, enqueued.stderr).toBe(0);
      const runId = (JSON.parse(enqueued.stdout) as { runId: string }).runId;
      await waitFor(
        `run ${name} to be summarised with its grades`,
        async () => {
          const row = await services.db
            .selectFrom('runs')
            .select('summary')
            .where('id', '=', runId)
            .executeTakeFirst();
          const summary = row?.summary as { pending?: number; graded?: unknown } | null | undefined;
          return summary?.pending === 0 && summary.graded ? summary : undefined;
        },
        RUN_MS,
        1_000,
      );
      return runId;
    }

    async function scoresOf(runId: string) {
      const rows = await new OsworldGradesRepository(services.db).taskGrades(runId);
      return Object.fromEntries(
        rows.map((row) => [
          row.task_id,
          { claimed: row.claimed_success, score: row.score, why: row.reason ?? row.no_score_cause },
        ]),
      );
    }

    it(
      'the right paths are graded 1 and the wrong ones 0, the agent claiming success both times',
      async () => {
        agent.takePath('right');
        const right = await scoresOf(await gradedRun('real-desktop-right'));
        agent.takePath('wrong');
        const wrong = await scoresOf(await gradedRun('real-desktop-wrong'));
        const expected = (score: number) =>
          Object.fromEntries(
            OSWORLD_TASK_SCRIPTS.map((script) => [
              script.taskId,
              expect.objectContaining({ claimed: true, score }),
            ]),
          );
        if (
          JSON.stringify(right).includes('"score":0') ||
          JSON.stringify(wrong).includes('"score":1')
        )
          log(
            `desktop log:\n${await desktop.logs()}\nworker log:\n${worker.output().slice(-20_000)}`,
          );
        expect(right).toEqual(expected(1));
        expect(wrong).toEqual(expected(0));
      },
      2 * RUN_MS,
    );
  });
});
