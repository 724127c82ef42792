import { mkdtemp, realpath, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { LocalPythonRunner } from './local-python-runner.js';

let dir: string;
beforeEach(async () => {
  dir = await realpath(await mkdtemp(join(tmpdir(), 'python-runner-')));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('LocalPythonRunner', () => {
  it('runs the script in the given folder and reports its output and exit code', async () => {
    const sut = new LocalPythonRunner();
    const run = await sut.run(dir, 'import os, sys\nprint(os.getcwd())\nsys.exit(3)', {
      timeoutMs: 60_000,
    });
    expect(run).toEqual({ stdout: `${dir}\n`, stderr: '', exitCode: 3 });
  });

  it('kills a script that outlives its deadline and says so', async () => {
    const sut = new LocalPythonRunner();
    const run = sut.run(dir, 'import time\ntime.sleep(600)', { timeoutMs: 200 });
    await expect(run).rejects.toThrow('did not finish within 200 ms');
  });

  it('rejects when the interpreter cannot be started', async () => {
    const sut = new LocalPythonRunner('/nonexistent/python3');
    await expect(sut.run(dir, 'pass', { timeoutMs: 1000 })).rejects.toThrow('cannot run');
  });
});
