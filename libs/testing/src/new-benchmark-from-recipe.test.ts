import { execFileSync, spawn } from 'node:child_process';
import {
  copyFileSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  renameSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { workspacePackages } from '../../../workspace-apps.mjs';
import {
  killLeftoverProcesses,
  startScript,
  waitFor,
  waitForWorkerReady,
  type StartedProcess,
} from './process-harness.js';
import { useTestServices } from './test-services.js';

// A new benchmark added from the recipe alone (examples/echo-benchmark/README.md), in a copy of the
// repository: step 1 (copy the echo folder, say `parrot` where it says `echo`, its table
// `parrot_answers` with it; not `arith`, which benchmark-entries.test.ts adds in its own copy),
// then what step 7 says `npm install` does, and nothing else by hand.
// Then: only its folder and the files the tools write changed; the tests that read the list of
// benchmarks pass with it; typecheck, eslint, knip and prettier are green; one of its tasks runs end to end
// against real Postgres and Redis and leaves its row in its own table.

const REPO_DIR = fileURLToPath(new URL('../../..', import.meta.url));
const FOLDER = 'examples/parrot-benchmark';
/** What step 7 says `npm install` writes outside the folder, from the workspace's package.json files. */
const WRITTEN_BY_TOOLS = [
  'deploy/compose.yaml',
  'deploy/k8s/benchmark-workers.yaml',
  'libs/benchmarks/src/benchmark-entries.ts',
];
/** A bound that only catches a hang: at load 20-30 on 2 cores the listed tests took 6.4 min. */
const HANG_BOUND_MS = 1_800_000;
const services = useTestServices();
const processes: StartedProcess[] = [];
let copy: string;

/** Runs a command in the copy to its end; its exit code and what it wrote. */
function runIn(
  command: string,
  args: string[],
  env: NodeJS.ProcessEnv = process.env,
): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    const child = spawn(command, args, { cwd: copy, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.once('error', (error) => resolve({ code: 1, output: error.message }));
    child.once('close', (code) => resolve({ code, output }));
  });
}

const git = (...args: string[]) => execFileSync('git', args, { cwd: copy, encoding: 'utf8' });

/** The repository's files as git knows them (committed or not, ignored ones left out), copied. */
function copyRepository(): void {
  const files = execFileSync('git', ['ls-files', '--cached', '--others', '--exclude-standard'], {
    cwd: REPO_DIR,
    encoding: 'utf8',
  })
    .split('\n')
    .filter(Boolean);
  for (const file of files) {
    mkdirSync(dirname(join(copy, file)), { recursive: true });
    // Copies, never hard links: the tools rewrite files in place, and the repository's must stay.
    try {
      copyFileSync(join(REPO_DIR, file), join(copy, file));
    } catch (error) {
      // A file deleted in the work tree but still in the index.
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    }
  }
}

/**
 * node_modules as `npm install` leaves it: the npm packages (links to the repository's, read only)
 * and each workspace package of the copy linked under its name, the new ones included.
 */
function linkNodeModules(): void {
  const modules = join(copy, 'node_modules');
  mkdirSync(modules, { recursive: true });
  for (const entry of readdirSync(join(REPO_DIR, 'node_modules'))) {
    // The workspace's own are linked below; caches (.cache, .vite) are written: the copy starts without.
    if (entry === '@benchfleet' || (entry.startsWith('.') && entry !== '.bin')) continue;
    symlinkSync(realpathSync(join(REPO_DIR, 'node_modules', entry)), join(modules, entry));
  }
  for (const { name, dir } of workspacePackages(copy)) {
    const link = join(modules, name);
    mkdirSync(dirname(link), { recursive: true });
    symlinkSync(relative(dirname(link), dir), link);
  }
}

/** The files under `dir`, relative to it. */
function filesUnder(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => relative(dir, join(entry.parentPath, entry.name)));
}

/** Step 1: the echo folder copied, `parrot` said where it says `echo` (names, files, its table). */
function addParrotFromRecipe(): void {
  const source = join(copy, 'examples', 'echo-benchmark');
  const target = join(copy, FOLDER);
  for (const file of filesUnder(source)) {
    const renamed = join(target, file.replaceAll('echo', 'parrot'));
    mkdirSync(dirname(renamed), { recursive: true });
    writeFileSync(
      renamed,
      readFileSync(join(source, file), 'utf8')
        .replaceAll('echo', 'parrot')
        .replaceAll('Echo', 'Parrot'),
    );
  }
  // Its migration after the newest one (step 3): a timestamp of its own.
  const migrations = join(target, 'lib', 'migrations');
  const [migration] = readdirSync(migrations).filter((file) => /^\d{14}_/.test(file));
  renameSync(join(migrations, migration!), join(migrations, `20261208110000_parrot_answers.ts`));
  const index = join(migrations, 'index.ts');
  writeFileSync(
    index,
    readFileSync(index, 'utf8').replaceAll(migration!.slice(0, 14), '20261208110000'),
  );
}

beforeAll(async () => {
  copy = mkdtempSync(join(tmpdir(), 'benchfleet-recipe-'));
  copyRepository();
  git('init', '-q');
  git('add', '-A');
  git('-c', 'user.name=test', '-c', 'user.email=test@localhost', 'commit', '-qm', 'before');
  addParrotFromRecipe();
  linkNodeModules();
  // Step 7, what `npm install` runs (its prepare, as `npm run build`): the registry's module, the
  // bins, the deploy manifests. (The dashboard's web bundle is left out: it names no benchmark.)
  for (const script of ['benchmark-entries.mjs', 'build-bins.mjs', 'deploy/worker-manifests.mjs']) {
    const run = await runIn(process.execPath, [script]);
    expect(run.code, `${script}: ${run.output}`).toBe(0);
  }
}, HANG_BOUND_MS);

afterAll(async () => {
  await killLeftoverProcesses(processes);
  if (copy) rmSync(copy, { recursive: true, force: true });
});

describe('a new benchmark added from the recipe alone (examples/parrot-benchmark in a copy)', () => {
  it('changes only its folder and the files the tools write from the package.json files', () => {
    const changed = git('status', '--porcelain', '--untracked-files=all')
      .split('\n')
      .filter(Boolean)
      .map((line) => line.slice(3));
    expect(changed.filter((file) => !file.startsWith(`${FOLDER}/`)).sort()).toEqual(
      WRITTEN_BY_TOOLS,
    );
    expect(changed).toContain(`${FOLDER}/lib/migrations/20261208110000_parrot_answers.ts`);
    expect(readFileSync(join(copy, 'libs/benchmarks/src/benchmark-entries.ts'), 'utf8')).toContain(
      "import { parrotEntry } from '@benchfleet/parrot-benchmark/entry';",
    );
  });

  it(
    'passes the tests that read the list of benchmarks',
    async () => {
      const run = await runIn(
        join(copy, 'node_modules', '.bin', 'vitest'),
        [
          'run',
          // Its bounds only catch a hang (at load 38 cli-bad-input's setup passed the suite's 10 min).
          `--hookTimeout=${HANG_BOUND_MS}`,
          `--testTimeout=${HANG_BOUND_MS}`,
          'libs/testing/src/benchmark-entries.test.ts',
          'libs/testing/src/readme-recipe.test.ts',
          'libs/testing/src/import-rules.test.ts',
          'libs/db/src/migrate.test.ts',
        ],
        {
          ...process.env,
          TEST_DATABASE_URL: process.env.TEST_DATABASE_URL,
          TEST_REDIS_URL: process.env.TEST_REDIS_URL,
        },
      );
      expect(run.code, run.output).toBe(0);
    },
    HANG_BOUND_MS,
  );

  // cli-bad-input.test.ts reads the names from the registry too, but its set-up (catalogs, runs)
  // costs minutes on a busy machine: the two answers it checks that name the benchmarks are asked
  // of the copy's scheduler directly.
  it('is offered by the scheduler: in the choices of --benchmark and in the hint of a bare enqueue', async () => {
    const scheduler = join(copy, 'apps/scheduler/bin/scheduler.js');
    // Its table made first: the scheduler checks the schema has every migration its registry knows.
    const migrate = await runIn(process.execPath, [scheduler, 'migrate'], services.env);
    expect(migrate.code, migrate.output).toBe(0);
    const unknown = await runIn(
      process.execPath,
      [scheduler, 'enqueue', '--benchmark', 'nope'],
      services.env,
    );
    expect(unknown.code, unknown.output).toBe(2);
    expect(unknown.output).toMatch(/Allowed choices are [^\n]*\bparrot\b/);
    // With the services named and migrated: a bare enqueue checks both before it asks for a benchmark.
    const bare = await runIn(process.execPath, [scheduler, 'enqueue'], services.env);
    expect(bare.code, bare.output).toBe(2);
    expect(bare.output).toMatch(/say which benchmark to run: --benchmark [^\n]*\bparrot\b/);
  });

  it(
    'is green to typecheck, eslint (its folder and the written module), knip and prettier',
    async () => {
      const bin = (name: string) => join(copy, 'node_modules', '.bin', name);
      for (const [name, args] of [
        ['tsc', ['-p', 'tsconfig.json', '--noEmit']],
        ['eslint', [FOLDER, 'libs/benchmarks/src', '--max-warnings', '0']],
        ['knip', []],
        // Its migration is left as written (frozen, .prettierignore), the rest formatted.
        ['prettier', ['--check', FOLDER]],
      ] as const) {
        const run = await runIn(bin(name), [...args]);
        expect(run.code, `${name}: ${run.output}`).toBe(0);
      }
    },
    HANG_BOUND_MS,
  );

  it('runs a task end to end: migrate makes its table, its worker runs the task, its row is there', async () => {
    const scheduler = join(copy, 'apps/scheduler/bin/scheduler.js');
    const migrate = await runIn(process.execPath, [scheduler, 'migrate'], services.env);
    expect(migrate.code, migrate.output).toBe(0);
    const enqueued = await runIn(
      process.execPath,
      [scheduler, 'enqueue', '--benchmark', 'parrot', '--parrot-tasks', '2', '--json'],
      services.env,
    );
    expect(enqueued.code, enqueued.output).toBe(0);
    const { runId } = JSON.parse(enqueued.output.slice(enqueued.output.indexOf('{'))) as {
      runId: string;
    };
    const worker = startScript(
      join(copy, FOLDER, 'worker/bin/worker-parrot.js'),
      ['--worker-id', 'parrot-1'],
      { ...services.env, LOG_LEVEL: 'info' },
      false,
    );
    processes.push(worker);
    await waitForWorkerReady(worker);
    const tasks = await waitFor('the parrot run to settle', async () => {
      const rows = await services.db
        .selectFrom('tasks')
        .select(['task_id', 'status'])
        .where('run_id', '=', runId)
        .orderBy('task_id')
        .execute();
      return rows.every((row) => row.status !== 'queued' && row.status !== 'running')
        ? rows
        : undefined;
    });
    expect(tasks).toEqual([
      { task_id: 'parrot-000', status: 'success' },
      { task_id: 'parrot-001', status: 'failed' },
    ]);
    const answers = await sql<{ task_id: string; attempt: number; answer: string }>`
      select task_id, attempt, answer from parrot_answers where run_id = ${runId} order by task_id
    `.execute(services.db);
    expect(answers.rows).toEqual([
      { task_id: 'parrot-000', attempt: 1, answer: 'say 0' },
      { task_id: 'parrot-001', attempt: 1, answer: '(silence)' },
    ]);
  });
});
