import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureDockerEngine } from '@benchfleet/testing';
import { DEPLOY_DIR } from './k8s-manifests.js';

// deploy/desktop/build-desktop-images.mjs refusing what it must not build from: bad arguments
// (exit 2, before anything else) and a source that is not the pinned one (exit 1, one line,
// nothing built). Building for real is the real-desktop test's (apps/worker-osworld).

const engine = await ensureDockerEngine();
if (!engine.available) process.stderr.write(`build tests skipped: ${engine.reason}\n`);
const SCRIPT = join(DEPLOY_DIR, 'desktop', 'build-desktop-images.mjs');
let scratch: string;

function build(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [SCRIPT, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.once('close', (code) => resolve({ code, stdout, stderr }));
  });
}

beforeAll(async () => {
  scratch = await mkdtemp(join(tmpdir(), 'desktop-images-'));
});
afterAll(async () => {
  await rm(scratch, { recursive: true, force: true });
});

describe('deploy/desktop/build-desktop-images.mjs', () => {
  it('refuses bad arguments with one line and exit 2', async () => {
    expect(await build(['--bytebot-desktop', 'cloud'])).toEqual({
      code: 2,
      stdout: '',
      stderr:
        'build-desktop-images: --bytebot-desktop cloud: give auto (pull, else build), registry or local\n',
    });
    const unknown = await build(['--fast']);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/^build-desktop-images: unknown argument '--fast' \(usage: /);
    expect((await build(['--tag'])).stderr).toMatch(/^build-desktop-images: --tag needs a value/);
    expect((await build(['--tag', 'Not An Image'])).code).toBe(2);
  });

  it.skipIf(!engine.available)(
    'a source tarball that is not the pinned one stops the build before anything is built',
    async () => {
      const upstream = join(scratch, 'upstream');
      await mkdir(upstream, { recursive: true });
      const fake = Buffer.from('not the tarball');
      await writeFile(join(upstream, 'bytebot-99347e2.tar.gz'), fake);
      const result = await build([
        '--bytebot-desktop',
        'local',
        '--upstream',
        upstream,
        '--work',
        join(scratch, 'work'),
        '--tag',
        'benchfleet-desktop:refused-test',
      ]);
      expect(result.code).toBe(1);
      expect(result.stdout).toBe('');
      expect(result.stderr.trim().split('\n').at(-1)).toBe(
        `build-desktop-images: ${upstream}/bytebot-99347e2.tar.gz: sha256 ${createHash('sha256').update(fake).digest('hex')}, pinned 571c344ad0237f6a8b5d79d8d4965fe20402ff2dee77e8a78eda30356bf3fe32`,
      );
      expect(result.stderr).not.toContain('Step 1/');
    },
  );
});
