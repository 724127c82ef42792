import { spawn } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDatabase, type Database } from '@benchfleet/db';
import { OsworldGradesRepository, type OsworldTask } from '@benchfleet/osworld';
import {
  buildBytebotAgentStandIn,
  buildDesktopImages,
  buildProjectImage,
  ComposeProject,
  ensureDockerEngine,
  ensureLocalImages,
  inspect,
  OSWORLD_TASK_SCRIPTS,
  osworldExampleTask,
  waitFor,
  writeOsworldTestDataset,
} from '@benchfleet/testing';

// One graded OSWorld stack of deploy/compose.yaml brought up for real: Postgres, Redis, migrate,
// the keeper, and stack 1 (bytebot-desktop-1 from the desktop image of deploy/desktop, grader-1
// from deploy/grader, worker-osworld as osworld-1, the agent's own Postgres), each in its own
// container, the stack on its own network. Bytebot's agent image cannot be pulled here: the
// test-only override deploy/compose.bytebot-agent-stand-in.yaml puts the scripted fake agent in
// its place, acting through the stack's real bytebotd. One os task is enqueued with
// `--grade --grader both` from the cli container: the worker recreates its desktop through the
// Docker socket, sets the task up through the VM server, the agent acts, and both the port and
// OSWorld's own evaluators in the grader container grade it: 1 done right, 0 done wrong.

const engine = await ensureDockerEngine();
if (!engine.available)
  console.warn(`${import.meta.url.replace(/^.*\/deploy\//, 'deploy/')}: skipped: ${engine.reason}`);

const ROOT = fileURLToPath(new URL('../', import.meta.url));
const log = (line: string) => console.info(`[compose-osworld] ${line}`);
/** A fresh machine builds the desktop and grader images first (README: about 50 minutes). */
const FIRST_BUILD_MS = 120 * 60_000;
/** Bounds that only catch a hang: a task is reset, set up, acted on and graded in minutes. */
const RUN_MS = 20 * 60_000;
const SCRIPT = OSWORLD_TASK_SCRIPTS.find((script) => script.domain === 'os')!;
const DATASETS = '/data/osworld-test';

let compose: ComposeProject;
let db: Database;
let scratch: string;
let task: OsworldTask;

function buildGraderImage(): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [join(ROOT, 'deploy/grader/build-grader-image.mjs')], {
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    child.once('error', reject);
    child.once('close', (code) =>
      code === 0 ? resolve() : reject(new Error(`build-grader-image.mjs: exit ${code}`)),
    );
  });
}

async function healthy(container: string): Promise<void> {
  await waitFor(
    `${container} to be healthy`,
    async () => (await inspect(container, '{{.State.Health.Status}}')) === 'healthy',
    600_000,
    1_000,
  );
}

beforeAll(async () => {
  if (!engine.available) return;
  const image = await buildProjectImage(log);
  await ensureLocalImages(['postgres', 'redis'], { log });
  const desktopImage = await buildDesktopImages(log);
  expect(desktopImage).toBe('benchfleet-desktop:local');
  await buildGraderImage();
  const standIn = await buildBytebotAgentStandIn(image);
  task = await osworldExampleTask(SCRIPT.domain, SCRIPT.taskId);
  // The cli container (uid 1000) reads the datasets the test writes.
  scratch = mkdtempSync(join(tmpdir(), 'benchfleet-compose-osworld-'));
  chmodSync(scratch, 0o755);
  const name = `benchfleetow${process.pid}`;
  const desktop = `${name}-desktop-1`;
  compose = new ComposeProject(name, image, {
    files: ['compose.bytebot-agent-stand-in.yaml', 'compose.desktop-unprivileged.yaml'],
    profiles: ['osworld'],
    env: {
      DOCKER_GID: String(statSync('/var/run/docker.sock').gid),
      BYTEBOT_AGENT_STAND_IN_IMAGE: standIn,
    },
    services: {
      // Its own desktop's name, so that checkouts side by side never recreate each other's.
      'bytebot-desktop-1': { container_name: desktop },
      'osworld-1': {
        environment: {
          OSWORLD_RESET_COMMAND: `node /usr/local/lib/benchfleet-desktop-reset.mjs docker ${desktop}`,
        },
      },
      cli: { volumes: [`${scratch}:${DATASETS}:ro`] },
    },
  });
  const started = Date.now();
  await compose.composeOk(['up', '-d', '--no-build', 'scheduler', 'osworld-1'], 30 * 60_000);
  await healthy((await compose.containers('osworld-1'))[0]!);
  log(`stack up and healthy in ${((Date.now() - started) / 1000).toFixed(0)} s`);
  db = createDatabase(await compose.databaseUrl(), { max: 4 });
}, FIRST_BUILD_MS);

afterAll(async () => {
  await db?.destroy();
  await compose?.down();
  if (scratch) rmSync(scratch, { recursive: true, force: true });
});

/** Tells the stand-in agent which path to take for the task. */
async function agentTakes(path: 'right' | 'wrong'): Promise<void> {
  const control = await compose.published('bytebot-agent-1', 9992);
  const answer = await fetch(`http://${control}/script`, {
    method: 'PUT',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      path,
      tasks: [{ task_id: task.task_id, instruction: task.instruction }],
    }),
    signal: AbortSignal.timeout(30_000),
  });
  expect(answer.status, await answer.text()).toBe(204);
}

/** `scheduler enqueue --grade --grader both` in the cli container; the run, once summarised. */
async function gradedRun(runName: string): Promise<string> {
  await writeOsworldTestDataset(scratch, runName, [task]);
  chmodSync(join(scratch, `${runName}.json`), 0o644);
  const enqueued = await compose.cli([
    ...['scheduler', 'enqueue', '--benchmark', 'osworld'],
    ...['--dataset', `${DATASETS}/${runName}.json`, '--grade', '--grader', 'both'],
    ...['--run-name', runName, '--json'],
  ]);
  expect(enqueued.code, enqueued.stderr).toBe(0);
  const runId = (JSON.parse(enqueued.stdout) as { runId: string }).runId;
  await waitFor(
    `run ${runName} to be summarised with its grades`,
    async () => {
      const row = await db
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

async function gradeOf(runId: string) {
  const [row] = await new OsworldGradesRepository(db).taskGrades(runId);
  return (
    row && {
      claimed: row.claimed_success,
      score: row.score,
      grader: row.grader,
      agree: row.graders_agree,
      why: row.reason ?? row.no_score_cause,
    }
  );
}

describe.skipIf(!engine.available)(
  'deploy/compose.yaml, one graded OSWorld stack up for real',
  () => {
    it('runs the stack in containers: desktop, stand-in agent, grader and worker on the stack network', async () => {
      const running = await compose.composeOk(['ps', '--services', '--filter', 'status=running']);
      expect(running.split('\n').sort()).toEqual(
        ['bytebot-agent-1', 'bytebot-db-1', 'bytebot-desktop-1', 'grader-1', 'osworld-1']
          .concat(['postgres', 'redis', 'scheduler'])
          .sort(),
      );
      for (const service of ['bytebot-desktop-1', 'grader-1', 'bytebot-agent-1'])
        await healthy((await compose.containers(service))[0]!);
      const desktop = (await compose.containers('bytebot-desktop-1'))[0]!;
      expect(await inspect(desktop, '{{.Config.Image}}')).toBe('benchfleet-desktop:local');
      expect(await inspect(desktop, '{{json .NetworkSettings.Networks}}')).toContain(
        `${compose.name}_stack-1`,
      );
    }, 900_000);

    it(
      'an os task done right is graded 1 and done wrong 0 by both graders, the agent claiming success both times',
      async () => {
        await agentTakes('right');
        const right = await gradeOf(await gradedRun('compose-osworld-right'));
        await agentTakes('wrong');
        const wrong = await gradeOf(await gradedRun('compose-osworld-wrong'));
        if (right?.score !== 1 || wrong?.score !== 0) {
          const logs = await compose.compose(['logs', '--tail', '200']);
          log(`${JSON.stringify({ right, wrong })}\n${logs.stdout.slice(-30_000)}`);
        }
        expect(right).toMatchObject({ claimed: true, score: 1, grader: 'upstream', agree: true });
        expect(wrong).toMatchObject({ claimed: true, score: 0, grader: 'upstream', agree: true });
      },
      2 * RUN_MS + 60_000,
    );
  },
);
