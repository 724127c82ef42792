import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startFakeOsworldVm, type FakeOsworldVm } from '@benchfleet/testing';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { VmServerFaultError, VmServerUnreachableError } from '../grading/grading-errors.js';
import { OsworldVmServerClient, VM_SERVER_DEADLINES_MS } from './osworld-vm-server-client.js';

let vm: FakeOsworldVm;
let sut: OsworldVmServerClient;
let localDir: string;

beforeAll(async () => {
  localDir = await mkdtemp(join(tmpdir(), 'vm-client-'));
});
afterAll(async () => {
  await rm(localDir, { recursive: true, force: true });
});

describe('OsworldVmServerClient against the fake VM server', () => {
  beforeAll(async () => {
    vm = await startFakeOsworldVm();
  });
  afterAll(async () => {
    await vm.close();
  });
  const client = (
    overrides: ConstructorParameters<typeof OsworldVmServerClient>[0] extends infer O
      ? Partial<O>
      : never = {},
  ) =>
    new OsworldVmServerClient({
      baseUrl: vm.url,
      retries: { controllerDelayMs: 0, probeDelayMs: 0 },
      ...overrides,
    });

  it('every endpoint has a deadline, /execute longer than the server’s own 120 s kill', () => {
    expect(Object.values(VM_SERVER_DEADLINES_MS).every((ms) => ms > 0 && Number.isFinite(ms))).toBe(
      true,
    );
    expect(VM_SERVER_DEADLINES_MS.execute).toBeGreaterThan(120_000);
    expect(VM_SERVER_DEADLINES_MS.upload).toBe(600_000);
  });

  it('execute: 200 with output, error and returncode also for a non-zero exit', async () => {
    sut = client();
    const answer = await sut.execute('echo out; echo err >&2; exit 3', true);
    expect(answer).toMatchObject({ ok: true, output: 'out\n', error: 'err\n', returncode: 3 });
  });

  it('execute: the handler’s own 500 (program not found) is an answer, not a fault', async () => {
    const answer = await client().execute(['no-such-program-xyz'], false);
    expect(answer).toEqual({
      ok: false,
      status: 500,
      message: "[Errno 2] No such file or directory: 'no-such-program-xyz'",
    });
  });

  it('a 500 that is not the handler’s JSON (Flask’s page), and a 502, are faults of the server itself', async () => {
    vm.failNext('execute', 1, 500);
    await expect(client().execute('true', true)).rejects.toBeInstanceOf(VmServerFaultError);
    vm.failNext('file', 1, 502);
    await expect(
      client({ retries: { controllerAttempts: 1 } }).getFile('/home/user/x'),
    ).rejects.toMatchObject({
      name: 'VmServerFaultError',
      status: 502,
    });
  });

  it('getFile: bytes; a missing file is None after upstream’s 3 tries', async () => {
    await vm.writeFile('/home/user/a.bin', Buffer.from([0, 1, 2, 255]));
    expect(await client().getFile('~/a.bin')).toEqual(Buffer.from([0, 1, 2, 255]));
    const before = vm.count('file');
    expect(await client().getFile('/home/user/missing.txt')).toBeNull();
    expect(vm.count('file') - before).toBe(3);
  });

  it('getFile: a fault on one try and the file on the next is the file (the retry is upstream’s)', async () => {
    await vm.writeFile('/home/user/b.txt', 'b');
    vm.failNext('file', 1, 500);
    expect((await client().getFile('/home/user/b.txt'))?.toString()).toBe('b');
  });

  it('getFile: answers that are all faults end in the fault, never in None', async () => {
    vm.failNext('file', 3, 503);
    await expect(client().getFile('/home/user/b.txt')).rejects.toBeInstanceOf(VmServerFaultError);
  });

  it('upload: multipart to the path as written; `~` and relative paths resolve in /home/user', async () => {
    const local = join(localDir, 'payload.txt');
    await writeFile(local, 'payload');
    expect(await client().upload('~/up/one.txt', local)).toEqual({
      status: 200,
      text: 'File Uploaded: 7 bytes',
    });
    expect(await client().upload('two.txt', local)).toMatchObject({ status: 200 });
    expect((await vm.readFile('/home/user/up/one.txt')).toString()).toBe('payload');
    expect((await vm.readFile('/home/user/two.txt')).toString()).toBe('payload');
  });

  it('launch, window actions, screenshot and platform answer as upstream’s handlers do', async () => {
    expect(await client().launch(['sleep', '5'], false)).toEqual({
      status: 200,
      text: 'sleep 5 launched successfully',
    });
    expect(
      await client().activateWindow({
        window_name: 'Visual Studio Code',
        strict: false,
        by_class: false,
      }),
    ).toEqual({
      status: 200,
      text: 'Window activated successfully',
    });
    expect(await client().closeWindow({ window_name: '', strict: false, by_class: false })).toEqual(
      {
        status: 400,
        text: 'window_name required',
      },
    );
    expect((await client().screenshot()).subarray(1, 4).toString()).toBe('PNG');
    expect(await client().platform()).toBe('Linux');
    expect(vm.windowActions).toEqual([
      { action: 'activate', window_name: 'Visual Studio Code', strict: false, by_class: false },
    ]);
  });

  it('executePython runs `python -c` with pyautogui’s prefix, as execute_python_command does', async () => {
    vm.answerNext('execute', {
      status: 200,
      json: { status: 'success', output: 'Linux\n', error: '', returncode: 0 },
    });
    expect(await client().executePython('import platform; print(platform.system())')).toMatchObject(
      { output: 'Linux\n' },
    );
    expect(vm.requests.at(-1)?.body).toEqual({
      command: [
        'python',
        '-c',
        'import pyautogui; import time; pyautogui.FAILSAFE = False; import platform; print(platform.system())',
      ],
      shell: false,
    });
  });

  it('a hung endpoint ends at its deadline as unreachable; the caller’s abort passes through as the abort', async () => {
    const hung = await startFakeOsworldVm();
    try {
      hung.hang('platform');
      const fast = new OsworldVmServerClient({ baseUrl: hung.url, deadlinesMs: { platform: 200 } });
      await expect(fast.platform()).rejects.toMatchObject({
        name: 'VmServerUnreachableError',
        reason: 'no answer within 200 ms',
      });
      const controller = new AbortController();
      const pending = new OsworldVmServerClient({ baseUrl: hung.url }).platform({
        signal: controller.signal,
      });
      controller.abort(new Error('job deadline'));
      await expect(pending).rejects.toThrow('job deadline');
    } finally {
      await hung.close();
    }
  });
});

describe('the /terminal probe', () => {
  let server: Server | undefined;
  afterEach(async () => {
    await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
    server = undefined;
  });

  it('counts any HTTP answer, even a 500, as reachable', async () => {
    let probes = 0;
    server = createServer((_req, res) => {
      probes++;
      res.writeHead(500).end('Currently not implemented');
    });
    await new Promise<void>((resolve) => server?.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    await new OsworldVmServerClient({ baseUrl: url }).probe();
    expect(probes).toBe(1);
  });

  it('gives up after its tries when nothing answers (infra)', async () => {
    const closed = await startFakeOsworldVm();
    const url = closed.url;
    await closed.close();
    const sut = new OsworldVmServerClient({
      baseUrl: url,
      retries: { probeAttempts: 4, probeDelayMs: 0 },
    });
    await expect(sut.probe()).rejects.toMatchObject({
      name: 'VmServerUnreachableError',
      attempts: 4,
    });
  });

  it('waits for a server that comes up during its tries', async () => {
    const early = await startFakeOsworldVm();
    const port = Number(new URL(early.url).port);
    await early.close();
    const sut = new OsworldVmServerClient({
      baseUrl: `http://127.0.0.1:${port}`,
      retries: { probeAttempts: 20, probeDelayMs: 50 },
    });
    const probing = sut.probe();
    server = createServer((_req, res) => res.writeHead(200).end('{}'));
    await new Promise<void>((resolve) => server?.listen(port, '127.0.0.1', resolve));
    await expect(probing).resolves.toBeUndefined();
  });
});

it('an unreachable server is VmServerUnreachableError with the cause', async () => {
  const gone = await startFakeOsworldVm();
  await gone.close();
  const sut = new OsworldVmServerClient({ baseUrl: gone.url });
  const error = await sut.execute('true', true).catch((caught: unknown) => caught);
  expect(error).toBeInstanceOf(VmServerUnreachableError);
  expect((error as VmServerUnreachableError).reason).toMatch(/ECONNREFUSED/);
});
