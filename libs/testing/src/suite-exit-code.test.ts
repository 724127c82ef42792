import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const REPO_DIR = fileURLToPath(new URL('../../..', import.meta.url));
const FIXTURE = 'libs/testing/fixtures/exit-code.fixture.ts';

/** `npm test` in a child, limited to the fixture file; its exit code and output. */
function npmTest(
  outcome: 'pass' | 'fail',
  services: 'given' | 'provisioned',
): Promise<{ code: number | null; output: string }> {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    BENCHFLEET_EXTRA_TEST_FILE: FIXTURE,
    BENCHFLEET_FIXTURE_OUTCOME: outcome,
  };
  if (services === 'provisioned') {
    // As on a fresh machine: nothing says where Postgres and Redis are, so the suite starts its own.
    for (const name of ['TEST_DATABASE_URL', 'TEST_REDIS_URL', 'DATABASE_URL', 'REDIS_URL'])
      delete env[name];
  } else {
    env.TEST_DATABASE_URL = process.env.TEST_DATABASE_URL ?? '';
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
      if (services === 'given' && !process.env.TEST_DATABASE_URL) return;
      const failed = await npmTest('fail', services);
      expect(failed.output).toMatch(/1 failed/);
      expect(failed.code, failed.output.slice(-2_000)).not.toBe(0);
      const passed = await npmTest('pass', services);
      expect(passed.code, passed.output.slice(-2_000)).toBe(0);
    },
    180_000,
  );
});
