import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OsworldGradesRepository, type OsworldTask } from '@benchfleet/osworld';
import {
  buildDesktopImages,
  ensureDockerEngine,
  gradedPhaseTable,
  OSWORLD_TASK_SCRIPTS,
  osworldExampleTask,
  runCli,
  scriptedPathModel,
  startCli,
  startFakeWebServer,
  startRealDesktop,
  startScriptedBytebot,
  UPSTREAM_GRADED_TASK_SCRIPTS,
  useTestServices,
  waitFor,
  waitForOutput,
  writeOsworldTestDataset,
  type FakeWebServer,
  type RealDesktop,
  type ScriptedBytebot,
  type StartedProcess,
} from '@benchfleet/testing';

// One OSWorld task of every domain graded on the real desktop image (deploy/desktop) through the
// fleet as a user runs it: `scheduler enqueue --grade --grader both` → `worker-osworld
// --grader-url` → OSWorld's own evaluators in the grader image (deploy/grader) read the desktop
// through its VM server, and the port grades beside them where it covers the task (os, multi_apps,
// thunderbird), a disagreement recorded. The agent is a script acting through the real bytebotd:
// the right path is graded 1, the wrong one 0, the agent claiming success both times. vs_code is
// not run: the image has no VS Code (Debian packages none), and coverage calls its tasks ungraded.
// Two stacks (desktop + worker each) share the queue, the right and wrong runs in flight at once.

const engine = await ensureDockerEngine();
if (!engine.available) process.stderr.write(`real-desktop tests skipped: ${engine.reason}\n`);

const services = useTestServices();
const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const log = (line: string) => process.stderr.write(`[real-desktop-upstream] ${line}\n`);
/** The images may be built first (see bench/README). */
const FIRST_BUILD_MS = 90 * 60_000;
/** Bounds that only catch a hang. */
const RUN_MS = 30 * 60_000;
const SCRIPTS = [...OSWORLD_TASK_SCRIPTS, ...UPSTREAM_GRADED_TASK_SCRIPTS];
/** The tasks the port grades too (its phase-1 set): both grades must agree. */
const PORT_TASKS = new Set(OSWORLD_TASK_SCRIPTS.map((script) => script.taskId));
let scratch: string;

function docker(args: string[]): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn('docker', args, {
      stdio: ['ignore', 'ignore', 'pipe'],
      env: { ...process.env, DOCKER_BUILDKIT: '0' },
    });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.once('close', (code) => resolve({ code, stderr }));
  });
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

async function buildGraderImage(): Promise<void> {
  const built = await new Promise<number | null>((resolve) => {
    const child = spawn(
      process.execPath,
      [path.join(ROOT, 'deploy/grader/build-grader-image.mjs')],
      {
        stdio: ['ignore', 'ignore', 'inherit'],
      },
    );
    child.once('close', resolve);
  });
  expect(built).toBe(0);
}

async function desktopNamed(name: string, image: string): Promise<RealDesktop> {
  const started = await startRealDesktop({ name, log, image });
  if (!started.available) throw new Error(started.reason);
  return started.desktop;
}

/** The grader on the host's network: it reaches the desktops' published VM server ports. */
async function startGrader(name: string): Promise<string> {
  const port = await freePort();
  const started = await docker([
    'run',
    '-d',
    '--rm',
    '--name',
    name,
    '--network',
    'host',
    'benchfleet-grader:local',
    'benchfleet-grader',
    'serve',
    '--host',
    '127.0.0.1',
    '--port',
    String(port),
  ]);
  expect(started.code, started.stderr).toBe(0);
  const url = `http://127.0.0.1:${port}`;
  await waitFor(
    'the grader to answer',
    async () =>
      (await fetch(`${url}/healthz`, { signal: AbortSignal.timeout(2_000) })
        .then((response) => response.ok)
        .catch(() => false)) || undefined,
    120_000,
    250,
  );
  return url;
}

/** A stack: a desktop, its scripted agent, its worker. */
interface Stack {
  readonly desktop: RealDesktop;
  readonly agent: ScriptedBytebot;
  readonly worker: StartedProcess;
}

describe.skipIf(!engine.available)(
  "every domain on a real desktop, graded by OSWorld's own evaluators",
  () => {
    const stacks: Stack[] = [];
    let web: FakeWebServer;
    let tasks: OsworldTask[];
    let graderName: string;

    async function startStack(
      desktop: RealDesktop,
      graderUrl: string,
      name: string,
    ): Promise<Stack> {
      const agent = await startScriptedBytebot({
        desktop: { url: desktop.bytebotdUrl },
        check: (test) => desktop.holds(test),
        tasks,
        scripts: SCRIPTS,
      });
      const worker = startCli(
        'worker-osworld',
        [
          '--bytebot-url',
          agent.bytebot.url,
          '--desktop-url',
          desktop.bytebotdUrl,
          '--desktop-server-url',
          desktop.vmServerUrl,
          '--grader-url',
          graderUrl,
          '--reset-command',
          desktop.resetCommand,
          '--screen-size',
          desktop.label.screen ?? '1280x960',
          '--desktop-image',
          desktop.image,
          '--grading-cache',
          path.join(scratch, `grading-${name}`),
          '--download-mirrors',
          web.urlRewrites.map((rewrite) => `${rewrite.from}=${rewrite.to}`).join(','),
          '--stack-id',
          `stack-real-desktop-${name}`,
          '--grace-s',
          '5',
        ],
        {
          ...services.env,
          BENCHFLEET_ARTIFACTS: path.join(scratch, 'artifacts'),
          LOG_LEVEL: 'info',
        },
      );
      const stack = { desktop, agent, worker };
      stacks.push(stack);
      await waitForOutput(worker, 'worker ready', `worker ${name} to be ready`, 120_000);
      return stack;
    }

    beforeAll(async () => {
      scratch = await mkdtemp(path.join(tmpdir(), 'real-desktop-upstream-'));
      tasks = await Promise.all(
        SCRIPTS.map((script) => osworldExampleTask(script.domain, script.taskId)),
      );
      web = await startFakeWebServer();
      for (const script of SCRIPTS)
        for (const [url, body] of Object.entries((await script.downloads?.()) ?? {}))
          web.serve(url, body);
      // The images built (or reused) once, then both desktops and the grader started at once.
      const [image] = await Promise.all([buildDesktopImages(log), buildGraderImage()]);
      graderName = `benchfleet-grader-real-desktop-${process.pid}`;
      const [first, second, graderUrl] = await Promise.all([
        desktopNamed('upstream-a', image),
        desktopNamed('upstream-b', image),
        startGrader(graderName),
      ]);
      await Promise.all([startStack(first, graderUrl, 'a'), startStack(second, graderUrl, 'b')]);
    }, FIRST_BUILD_MS);

    afterAll(async () => {
      for (const { worker } of stacks)
        if (worker.child.exitCode === null && worker.child.signalCode === null)
          worker.child.kill('SIGTERM');
      await Promise.all(stacks.map(({ worker }) => worker.exited));
      await Promise.all(stacks.map(({ agent }) => agent.close()));
      await web?.close();
      if (graderName) await docker(['rm', '-f', graderName]);
      await Promise.all(stacks.map(({ desktop }) => desktop.close()));
      if (scratch) await rm(scratch, { recursive: true, force: true });
    });

    /** Enqueues a graded run whose tasks the scripted agents do the `path` way. */
    async function enqueue(name: string, path: 'right' | 'wrong'): Promise<string> {
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
          // Upstream's grade; the port's beside it where it covers the task, a disagreement recorded.
          '--grader',
          'both',
          '--model',
          JSON.stringify(scriptedPathModel(path)),
          '--run-name',
          name,
          '--json',
        ],
        services.env,
      );
      expect(enqueued.code, enqueued.stderr).toBe(0);
      return (JSON.parse(enqueued.stdout) as { runId: string }).runId;
    }

    async function settled(runIds: readonly string[]): Promise<void> {
      await waitFor(
        'both runs to settle',
        async () => {
          const open = await services.db
            .selectFrom('tasks')
            .select('task_id')
            .where('run_id', 'in', [...runIds])
            .where('status', 'in', ['queued', 'running'])
            .execute();
          return open.length === 0 || undefined;
        },
        RUN_MS,
        1_000,
      );
    }

    async function gradesOf(runId: string) {
      return Object.fromEntries(
        (await new OsworldGradesRepository(services.db).taskGrades(runId)).map((row) => [
          `${row.domain}/${row.task_id}`,
          {
            claimed: row.claimed_success,
            grader: row.grader,
            score: row.score,
            why: row.reason ?? row.no_score_cause,
            agree: row.graders_agree,
          },
        ]),
      );
    }

    it(
      'the right paths are graded 1 and the wrong ones 0 by upstream, the port agreeing where it grades, the agent claiming success both times',
      async () => {
        const rightRun = await enqueue('real-desktop-right', 'right');
        const wrongRun = await enqueue('real-desktop-wrong', 'wrong');
        await settled([rightRun, wrongRun]);
        log(`phases (s):\n${await gradedPhaseTable(services.db, [rightRun, wrongRun])}`);
        const right = await gradesOf(rightRun);
        const wrong = await gradesOf(wrongRun);
        const expected = (score: number) =>
          Object.fromEntries(
            SCRIPTS.map((script) => [
              `${script.domain}/${script.taskId}`,
              {
                claimed: true,
                grader: 'upstream',
                score,
                why: null,
                agree: PORT_TASKS.has(script.taskId) ? true : null,
              },
            ]),
          );
        if (
          JSON.stringify(right).includes('"score":0') ||
          JSON.stringify(wrong).includes('"score":1')
        )
          for (const [index, { desktop, worker }] of stacks.entries())
            log(
              `stack ${index} desktop log:\n${await desktop.logs()}\nworker log:\n${worker.output().slice(-20_000)}`,
            );
        expect(right).toEqual(expected(1));
        expect(wrong).toEqual(expected(0));
        for (const runId of [rightRun, wrongRun])
          expect(await new OsworldGradesRepository(services.db).runGrading(runId)).toMatchObject({
            grader_disagreements: 0,
          });
        const domains = new Set(SCRIPTS.map((script) => script.domain));
        expect([...domains].sort()).toEqual([
          'chrome',
          'gimp',
          'libreoffice_calc',
          'libreoffice_impress',
          'libreoffice_writer',
          'multi_apps',
          'os',
          'thunderbird',
          'vlc',
        ]);
      },
      RUN_MS,
    );
  },
);
