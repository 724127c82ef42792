import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { OsworldGradesRepository, type OsworldTask } from '@benchfleet/osworld';
import { UPSTREAM_GRADER_VERSION } from '@benchfleet/osworld-grading';
import { JobProducer, taskJobId } from '@benchfleet/queue';
import { benchmarks } from '@benchfleet/benchmarks';
import { enqueueRun, planRun } from '@benchfleet/runs';
import {
  ensureDockerEngine,
  osworldExampleTask,
  startCli,
  startFakeGradedStack,
  useTestServices,
  waitFor,
  waitForOutput,
  writeOsworldTestDataset,
  type FakeBytebotScenario,
  type FakeGradedStack,
  type StartedProcess,
} from '@benchfleet/testing';

// Graded runs through the fleet with OSWorld's own evaluators: the real worker process, real
// Postgres, Redis and artifact store, the fake graded stack (its fake VM server over a sandbox),
// and the real grader image (deploy/grader) serving POST /grade on the host's network. A task
// outside the port's set is graded by upstream's evaluate(); `--grader both` keeps both graders'
// scores; a grader that does not answer is infra, retried, never a score.

const engine = await ensureDockerEngine();
if (!engine.available) process.stderr.write(`upstream grader tests skipped: ${engine.reason}\n`);
const services = useTestServices();
const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const IMAGE = 'benchfleet-grader:local';
// libreoffice_impress, outside the port's (phase-1) set: LibreOffice's autosave interval.
const IMPRESS_TASK = '2cd43775-7085-45d8-89fa-9e35c0a915cf';
// os, inside the port's set: a file restored from the trash, checked by a command.
const POSTER_TASK = '5ea617a3-0e86-4ba6-aab2-dac9aa2e8d57';
const POSTER_URL =
  'https://huggingface.co/datasets/xlangai/ubuntu_osworld_file_cache/resolve/main/os/5ea617a3-0e86-4ba6-aab2-dac9aa2e8d57/poster_party_night.webp';
const RESTORE_POSTER =
  'mv ~/.local/share/Trash/files/poster_party_night.webp ~/Desktop/poster_party_night.webp';

let producer: JobProducer;
let scratchDir: string;
let fakes: FakeGradedStack;
let graderPort: number;
let graderName: string;
const workers: StartedProcess[] = [];

function docker(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn('docker', args, {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, DOCKER_BUILDKIT: '0' },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.once('close', (code) => resolve({ code, stdout, stderr }));
  });
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** The grader image's server on the host's network (it reaches the fake VM server on loopback). */
async function startGrader(): Promise<void> {
  const started = await docker([
    'run',
    '-d',
    '--rm',
    '--name',
    graderName,
    '--network',
    'host',
    IMAGE,
    'benchfleet-grader',
    'serve',
    '--host',
    '127.0.0.1',
    '--port',
    String(graderPort),
  ]);
  expect(started.code, started.stderr).toBe(0);
  await waitFor(
    'the grader to answer /healthz',
    async () =>
      (await fetch(`http://127.0.0.1:${graderPort}/healthz`, { signal: AbortSignal.timeout(2_000) })
        .then((response) => response.ok)
        .catch(() => false)) || undefined,
    600_000,
    250,
  );
}

async function stopGrader(): Promise<void> {
  await docker(['rm', '-f', graderName]);
}

async function enqueueTasks(tasks: OsworldTask[], grader: string): Promise<string> {
  const dataset = await writeOsworldTestDataset(
    scratchDir,
    `dataset-${Math.random().toString(36).slice(2)}`,
    tasks,
  );
  const planned = await planRun(
    benchmarks,
    { benchmark: 'osworld', domains: [], flags: { dataset }, maxSteps: 20 },
    { db: services.db, env: process.env },
  );
  return enqueueRun(
    { db: services.db, producer },
    { ...planned, config: { ...(planned.config as object), grade: true, grader } },
  );
}

async function settledTask(runId: string, taskId: string) {
  return waitFor(
    `task ${taskId} of run ${runId} to settle`,
    async () => {
      const task = await services.db
        .selectFrom('tasks')
        .selectAll()
        .where('run_id', '=', runId)
        .where('task_id', '=', taskId)
        .executeTakeFirst();
      return task && task.status !== 'queued' && task.status !== 'running' ? task : undefined;
    },
    600_000,
    100,
  );
}

/** The agent's hands write LibreOffice's user settings with this autosave interval. */
function writesAutosave(minutes: number): string {
  const xcu =
    '<?xml version="1.0" encoding="UTF-8"?>\n' +
    '<oor:items xmlns:oor="http://openoffice.org/2001/registry">\n' +
    '<item oor:path="/org.openoffice.Office.Common/Save/Document"><prop oor:name="AutoSaveTimeIntervall" oor:op="fuse"><value>' +
    `${minutes}</value></prop></item>\n</oor:items>\n`;
  return (
    'mkdir -p ~/.config/libreoffice/4/user && ' +
    `echo ${Buffer.from(xcu).toString('base64')} | base64 -d > ~/.config/libreoffice/4/user/registrymodifications.xcu`
  );
}

const completes = (desktopCommands: Record<number, string> = {}): FakeBytebotScenario => ({
  steps: 3,
  ending: { kind: 'completed', answer: 'Done.' },
  desktopCommands,
});

const grades = () => new OsworldGradesRepository(services.db);

describe.skipIf(!engine.available)(
  "worker-osworld with OSWorld's own evaluators (--grader-url): the grader image grades",
  () => {
    let worker: StartedProcess;

    beforeAll(async () => {
      const built = await new Promise<number | null>((resolve) => {
        const child = spawn(
          process.execPath,
          [path.join(ROOT, 'deploy/grader/build-grader-image.mjs')],
          { stdio: ['ignore', 'ignore', 'inherit'] },
        );
        child.once('close', resolve);
      });
      expect(built).toBe(0);
      producer = new JobProducer(services.redisUrl, services.prefix);
      scratchDir = await mkdtemp(path.join(tmpdir(), 'worker-osworld-upstream-'));
      fakes = await startFakeGradedStack({ scenario: completes(), vm: { apps: ['libreoffice'] } });
      fakes.web.serve(POSTER_URL, 'RIFF....WEBPVP8 poster');
      graderPort = await freePort();
      graderName = `benchfleet-grader-test-${process.pid}`;
      await startGrader();
      worker = startCli(
        'worker-osworld',
        [
          '--bytebot-url',
          fakes.bytebot.url,
          '--desktop-url',
          fakes.bytebotd.url,
          '--desktop-server-url',
          fakes.vm.url,
          '--grader-url',
          `http://127.0.0.1:${graderPort}`,
          '--reset-command',
          fakes.resetCommand,
          '--screen-size',
          '1280x960',
          '--grading-cache',
          path.join(scratchDir, 'grading'),
          '--download-mirrors',
          fakes.web.urlRewrites.map((rewrite) => `${rewrite.from}=${rewrite.to}`).join(','),
          '--stack-id',
          'stack-upstream',
          '--grace-s',
          '5',
        ],
        {
          ...services.env,
          BENCHFLEET_ARTIFACTS: path.join(scratchDir, 'artifacts'),
          OSWORLD_VM_RETRY_DELAY_MS: '20',
          LOG_LEVEL: 'info',
        },
      );
      workers.push(worker);
      await waitForOutput(worker, 'worker ready', 'the worker to be ready');
    }, 3_600_000);

    afterEach(async () => {
      await producer.queue('osworld').obliterate({ force: true });
    });

    afterAll(async () => {
      for (const started of workers)
        if (started.child.exitCode === null && started.child.signalCode === null)
          started.child.kill('SIGKILL');
      await stopGrader();
      await fakes?.close();
      await producer?.close();
      if (scratchDir) await rm(scratchDir, { recursive: true, force: true });
    });

    it("a libreoffice_impress task outside the port's set: right path 1, wrong path 0, by upstream's evaluate()", async () => {
      const task = await osworldExampleTask('libreoffice_impress', IMPRESS_TASK);
      fakes.setScenario(completes({ 2: writesAutosave(3) }));
      const right = await enqueueTasks([task], 'auto');
      expect(await settledTask(right, IMPRESS_TASK)).toMatchObject({
        status: 'success',
        final_api_status: 'COMPLETED',
      });
      const [grade, ...more] = await grades().gradesOfTask(right, IMPRESS_TASK);
      expect(more).toEqual([]);
      expect(grade).toMatchObject({
        grader: 'upstream',
        metric_version: UPSTREAM_GRADER_VERSION,
        score: 1,
        python_type: 'int',
        fidelity: 'graded',
        final_signal: 'DONE',
        no_score_cause: null,
        details: {
          upstream: { metrics: ['check_auto_saving_time'], getters: ['vm_file', 'rule'] },
        },
      });
      // The setup ran on the desktop first: LibreOffice Impress was launched (the launch answers
      // once the process has started; the stand-in records its arguments when it gets to run).
      expect(fakes.vm.launches.map((launch) => launch.started)).toContainEqual([
        'libreoffice',
        '--impress',
      ]);
      await expect
        .poll(() => fakes.vm.appRuns(), { timeout: 600_000 })
        .toContainEqual(['libreoffice', '--impress']);

      fakes.setScenario(completes({ 2: writesAutosave(10) }));
      const wrong = await enqueueTasks([task], 'auto');
      await settledTask(wrong, IMPRESS_TASK);
      expect((await grades().gradesOfTask(wrong, IMPRESS_TASK))[0]).toMatchObject({
        grader: 'upstream',
        score: 0,
      });
      expect(await grades().runGrading(wrong)).toMatchObject({
        upstream_graded: 1,
        claimed_but_failed: 1,
      });
    });

    it("--grader both: upstream's grade, the port's beside it, their agreement recorded", async () => {
      fakes.setScenario(completes({ 2: RESTORE_POSTER }));
      const runId = await enqueueTasks([await osworldExampleTask('os', POSTER_TASK)], 'both');
      await settledTask(runId, POSTER_TASK);
      expect((await grades().gradesOfTask(runId, POSTER_TASK))[0]).toMatchObject({
        grader: 'upstream',
        score: 1,
      });
      const [row] = await grades().taskGrades(runId);
      expect(row).toMatchObject({ grader: 'upstream', graders_agree: true, score: 1 });
      expect(await grades().runGrading(runId)).toMatchObject({ grader_disagreements: 0 });
    });

    it("the task's gold from the internet reaches the grader from the worker's download cache", async () => {
      // The gold's host is not reachable from the grader: only the worker's cache (through its
      // download mirror, the fake web server) has it, and hands it over with the grade request.
      const goldUrl =
        'https://huggingface.co/datasets/xlangai/ubuntu_osworld_file_cache/resolve/main/benchfleet/gold.txt';
      fakes.web.serve(goldUrl, 'forty-two\n');
      const task: OsworldTask = {
        ...(await osworldExampleTask('libreoffice_impress', IMPRESS_TASK)),
        task_id: '7c0ffee0-0000-4000-8000-00000000cafe',
        config: [],
        evaluator: {
          func: 'compare_text_file',
          result: { type: 'vm_file', path: '/home/user/answer.txt', dest: 'answer.txt' },
          expected: { type: 'cloud_file', path: goldUrl, dest: 'gold.txt' },
        },
      };
      fakes.setScenario(completes({ 2: "printf 'forty-two\\n' > ~/answer.txt" }));
      const runId = await enqueueTasks([task], 'upstream');
      await settledTask(runId, task.task_id);
      const [grade] = await grades().gradesOfTask(runId, task.task_id);
      expect(grade).toMatchObject({ grader: 'upstream', score: 1, no_score_cause: null });
      expect(grade!.details).toMatchObject({
        upstream: {
          transportFaults: [],
          cacheFiles: [{ name: 'gold.txt', url: goldUrl, size: 10 }],
        },
      });
    });

    it('a grader that does not answer is infra: the attempt is retried, never scored', async () => {
      await stopGrader();
      fakes.setScenario(completes({ 2: writesAutosave(3) }));
      const runId = await enqueueTasks(
        [await osworldExampleTask('libreoffice_impress', IMPRESS_TASK)],
        'auto',
      );
      const [first] = await waitFor(
        'the first attempt to fail as infra',
        async () => {
          const attempts = await services.db
            .selectFrom('attempts')
            .selectAll()
            .where('run_id', '=', runId)
            .orderBy('attempt')
            .execute();
          return attempts[0]?.status === 'error' ? attempts : undefined;
        },
        600_000,
        100,
      );
      expect(first).toMatchObject({ error_class: 'infra' });
      expect(first!.error).toMatch(/grader http:\/\/127\.0\.0\.1:\d+: /);
      expect(await grades().gradesOfTask(runId, IMPRESS_TASK)).toEqual([]);
      await startGrader();
      const job = await producer.queue('osworld').getJob(taskJobId(runId, IMPRESS_TASK));
      if ((await job?.getState()) === 'delayed') await job!.promote();
      const task = await settledTask(runId, IMPRESS_TASK);
      expect(task.attempts).toBeGreaterThanOrEqual(2);
      const grade = (await grades().gradesOfTask(runId, IMPRESS_TASK)).at(-1);
      expect(grade).toMatchObject({ grader: 'upstream', score: 1, attempt: task.attempts });
    });
  },
);
