import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { cliBin } from './process-harness.js';

const REPO_DIR = fileURLToPath(new URL('../../..', import.meta.url));
const DIST = join(REPO_DIR, 'apps/scheduler/dist');

function filesUnder(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => join(entry.parentPath, entry.name));
}

describe('compiled CLIs', () => {
  // A child `npm test` rebuilt the bins (deleting dist first) while a fault test started
  // `scheduler worker`, which then failed to import one of its chunks (ERR_MODULE_NOT_FOUND).
  it('a rebuild never takes away a file a CLI that is starting may still load', async () => {
    const before = filesUnder(DIST);
    expect(before.some((file) => file.includes('/chunks/'))).toBe(true);
    const build = spawn(process.execPath, [join(REPO_DIR, 'build-bins.mjs'), 'scheduler'], {
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let errors = '';
    build.stderr.on('data', (chunk: Buffer) => (errors += chunk.toString()));
    const exited = new Promise<number | null>((resolve) => build.once('exit', resolve));
    let done = false;
    void exited.then(() => (done = true));
    const missing = new Set<string>();
    let looks = 0;
    while (!done) {
      for (const file of before) if (!existsSync(file)) missing.add(relative(REPO_DIR, file));
      looks += 1;
      await new Promise((resolve) => setImmediate(resolve));
    }
    expect(await exited, errors).toBe(0);
    expect(looks).toBeGreaterThan(10);
    expect([...missing]).toEqual([]);
    // Same sources, same content-hashed chunk names: the CLI still starts and is current.
    expect(filesUnder(DIST).sort()).toEqual(before.sort());
    const help = spawnSync(process.execPath, [cliBin('scheduler'), '--help'], {
      encoding: 'utf8',
      env: { ...process.env, BENCHFLEET_RUN_SOURCES: '' },
    });
    expect(help.status, help.stderr).toBe(0);
    expect(help.stdout).toMatch(/enqueue/);
  });

  it('--if-stale leaves current bundles alone', () => {
    const manifest = join(DIST, 'build.json');
    const builtAt = statSync(manifest).mtimeMs;
    const result = spawnSync(process.execPath, [join(REPO_DIR, 'build-bins.mjs'), '--if-stale'], {
      encoding: 'utf8',
    });
    expect(result.status, result.stderr).toBe(0);
    expect(result.stderr).toBe('');
    expect(statSync(manifest).mtimeMs).toBe(builtAt);
  });

  // npx finds the CLIs only inside the checkout (elsewhere npm looks them up on the registry and
  // says "could not determine executable to run"); the README's way to use them from anywhere is
  // the checkout's node_modules/.bin on PATH.
  it.each(['scheduler', 'worker-webshop', 'worker-osworld', 'dashboard'])(
    '%s runs from node_modules/.bin outside the checkout',
    (name) => {
      const result = spawnSync(name, ['--version'], {
        cwd: tmpdir(),
        encoding: 'utf8',
        env: { ...process.env, PATH: `${join(REPO_DIR, 'node_modules/.bin')}:${process.env.PATH}` },
      });
      expect(result.status, result.stderr).toBe(0);
      expect(result.stdout.trim()).toMatch(/^\d+\.\d+\.\d+/);
    },
  );
});
