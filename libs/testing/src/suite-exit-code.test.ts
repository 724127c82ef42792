import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, inject, it } from 'vitest';

const REPO_DIR = fileURLToPath(new URL('../../..', import.meta.url));
const FIXTURE = 'libs/testing/fixtures/exit-code.fixture.ts';

/** `npm test` in a child, limited to the fixture file; its exit code and output. */
function npmTest(
  outcome: 'pass' | 'fail',
  services: 'given' | 'provisioned',
  extraEnv: NodeJS.ProcessEnv = {},
): Promise<{ code: number | null; output: string }> {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    ...extraEnv,
    BENCHFLEET_EXTRA_TEST_FILE: FIXTURE,
    BENCHFLEET_FIXTURE_OUTCOME: outcome,
  };
  if (services === 'provisioned') {
    // As on a fresh machine: nothing says where Postgres and Redis are, so the suite starts its own.
    for (const name of ['TEST_DATABASE_URL', 'TEST_REDIS_URL', 'DATABASE_URL', 'REDIS_URL'])
      delete env[name];
  } else {
    // The services this run found, wherever they came from (embedded ones on a fresh machine).
    env.TEST_DATABASE_URL = inject('adminDatabaseUrl');
    env.TEST_REDIS_URL = inject('redisUrl');
  }
  for (const name of Object.keys(env))
    if (name.startsWith('VITEST') || name === 'NODE_OPTIONS') delete env[name];
  return new Promise((resolve, reject) => {
    const child = spawn('npm', ['test', '--', 'exit-code.fixture'], {
      cwd: REPO_DIR,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.once('error', reject);
    child.once('exit', (code) => resolve({ code, output }));
  });
}

describe('npm test', () => {
  // Embedded Postgres' npm wrapper once ended the process with code 0 from its exit hook.
  it.each(['provisioned', 'given'] as const)(
    'exits non-zero when a test fails, with services %s',
    async (services) => {
      const failed = await npmTest('fail', services);
      expect(failed.output).toMatch(/1 failed/);
      expect(failed.code, failed.output.slice(-2_000)).not.toBe(0);
      const passed = await npmTest('pass', services);
      expect(passed.code, passed.output.slice(-2_000)).toBe(0);
    },
  );

  // With an engine that answers but lacks the images (this machine) the run above provisions local
  // services; here no engine answers at all, as on a machine without Docker.
  it('passes with no Docker engine, its services provisioned', async () => {
    const passed = await npmTest('pass', 'provisioned', {
      DOCKER_HOST: 'unix:///nonexistent/benchfleet-no-docker.sock',
    });
    expect(passed.output).toMatch(/no containers for Postgres and Redis: no Docker engine answers/);
    expect(passed.output).toMatch(/1 passed/);
    expect(passed.code, passed.output.slice(-2_000)).toBe(0);
  });

  // The browser the dashboard tests need is checked before anything starts: a machine that cannot
  // provide it stops the run at once with one line naming it and the fix, not with skipped tests.
  it('stops at once with one line when the browser is missing', async () => {
    const run = await npmTest('pass', 'given', { CHROMIUM_PATH: '/nonexistent/chromium' });
    expect(run.code).toBe(1);
    const lines = run.output.split('\n').filter((line) => line.includes('benchfleet tests:'));
    expect(lines).toEqual([
      "benchfleet tests: the dashboard's browser tests need /nonexistent/chromium (CHROMIUM_PATH), which is not an executable: fix CHROMIUM_PATH, or unset it and install Debian's chromium (`apt-get update && apt-get install -y chromium`, as root)",
    ]);
    expect(run.output).not.toMatch(/Test Files|No test files found/);
  });
});
