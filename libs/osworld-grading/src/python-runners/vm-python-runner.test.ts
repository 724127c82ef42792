import { mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startFakeOsworldVm, type FakeOsworldVm } from '@benchfleet/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GradingInfraError } from '../grading/grading-errors.js';
import { OsworldVmServerClient } from '../vm-server/osworld-vm-server-client.js';
import { VmPythonRunner } from './vm-python-runner.js';

describe('VmPythonRunner over the VM server', () => {
  let vm: FakeOsworldVm;
  let localDir: string;
  let sut: VmPythonRunner;

  beforeAll(async () => {
    vm = await startFakeOsworldVm();
    localDir = await mkdtemp(join(tmpdir(), 'vm-python-'));
    await writeFile(join(localDir, 'snake.py'), 'def length():\n    return 3\n');
    await mkdir(join(localDir, 'assets'));
    await writeFile(join(localDir, 'assets', 'level.txt'), 'level 1');
    sut = new VmPythonRunner(new OsworldVmServerClient({ baseUrl: vm.url }));
  });
  afterAll(async () => {
    await vm.close();
    await rm(localDir, { recursive: true, force: true });
  });

  it('uploads the directory to a fresh temp dir on the desktop and runs there, importable and readable', async () => {
    const result = await sut.run(
      localDir,
      "import snake, sys\nprint(snake.length(), open('assets/level.txt').read())\nsys.exit(2)",
      { timeoutMs: 30_000 },
    );
    expect(result).toEqual({ stdout: '3 level 1\n', stderr: '', exitCode: 2 });
    const uploads = vm.requests
      .filter((request) => request.endpoint === 'upload')
      .map((request) => request.body);
    expect(uploads).toEqual([
      {
        file_path: expect.stringMatching(/\/benchfleet-python\.\w+\/assets\/level\.txt$/),
        bytes: 7,
      },
      { file_path: expect.stringMatching(/\/benchfleet-python\.\w+\/snake\.py$/), bytes: 27 },
    ]);
    expect(await readdir(join(vm.root, 'tmp'))).toEqual([]);
  });

  it('a script past its time is rejected and the temp dir still removed; a script that exits 124 is not', async () => {
    await expect(
      sut.run(localDir, 'import time\ntime.sleep(30)', { timeoutMs: 1_000 }),
    ).rejects.toThrow('python3 did not finish within 1 s on the desktop');
    expect(await readdir(join(vm.root, 'tmp'))).toEqual([]);
    expect(
      await sut.run(localDir, 'import sys\nsys.exit(124)', { timeoutMs: 5_000 }),
    ).toMatchObject({ exitCode: 124 });
  });

  it('a desktop that cannot make the temp dir is infra', async () => {
    vm.answerNext('execute', {
      status: 500,
      json: { status: 'error', message: "[Errno 2] No such file or directory: 'mktemp'" },
    });
    await expect(sut.run(localDir, 'print(1)', { timeoutMs: 1_000 })).rejects.toBeInstanceOf(
      GradingInfraError,
    );
  });
});
