import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, posix } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  startFakeOsworldVm,
  startFakeWebServer,
  type FakeOsworldVm,
  type FakeWebServer,
} from '@benchfleet/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DownloadCache } from '../downloads/download-cache.js';
import {
  compareGetterCase,
  getterFixtureFileSchema,
  makeCaseCacheDir,
  runGetterCase,
  runGetterFixtureCase,
  type GetterFixtureCase,
} from '../fixtures/getter-fixture-file.js';
import { VmServerUnreachableError } from '../grading/grading-errors.js';
import { OsworldVmServerClient } from '../vm-server/osworld-vm-server-client.js';
import { runGetter } from './osworld-getters.js';
import { PythonException } from '../python/exceptions.js';

const gettersFixtures = fileURLToPath(
  new URL('../../../../../shared/osworld/grading/metric-fixtures/_getters.json', import.meta.url),
);
const file = getterFixtureFileSchema.parse(JSON.parse(await readFile(gettersFixtures, 'utf8')));
const FILE_TRIES = 3;

describe('getter golden cases made by OSWorld’s getters', () => {
  it('has the 13 shared cases', () => {
    expect(file.cases).toHaveLength(13);
  });

  describe('with the VM and the web scripted from the case (what verify-grading runs)', () => {
    for (const fixtureCase of file.cases) {
      it(fixtureCase.id, async () => {
        expect(await runGetterFixtureCase(fixtureCase)).toEqual({ passed: true });
      });
    }
  });

  describe('over HTTP: a fake VM server and a fake web host built from the case', () => {
    for (const fixtureCase of file.cases) {
      it(fixtureCase.id, async () => {
        const { verdict } = await runOverHttp(fixtureCase);
        expect(verdict).toEqual({ passed: true });
      });
    }
  });

  it('the comparison fails a wrong return shape, a missing cache file or an extra request', async () => {
    const single = file.cases.find((fixtureCase) => fixtureCase.id === 'vm_file_single');
    if (!single) throw new Error('case vm_file_single is missing');
    expect((await runGetterFixtureCase({ ...single, returns: ['<CACHE>/a.txt'] })).passed).toBe(
      false,
    );
    expect((await runGetterFixtureCase({ ...single, cache_dir_after: {} })).passed).toBe(false);
    expect(
      (
        await runGetterFixtureCase({
          ...single,
          requests: [...single.requests, ...single.requests],
        })
      ).passed,
    ).toBe(false);
  });
});

/**
 * The case over the real protocol. Upstream's fixtures log PythonController.get_file once per file;
 * over HTTP a file the VM lacks is asked for 3 times (its retries), so those entries appear 3 times.
 */
async function runOverHttp(fixtureCase: GetterFixtureCase) {
  const mounts = [
    ...new Set(
      Object.keys(fixtureCase.vm_files)
        .filter((path) => !path.startsWith('/home/user/'))
        .map((path) => `/${path.split('/')[1]}`),
    ),
  ];
  const vm = await startFakeOsworldVm({ mounts });
  const web = await startFakeWebServer();
  const cacheDir = await makeCaseCacheDir(fixtureCase);
  const downloadsRoot = await mkdtemp(join(tmpdir(), 'osworld-downloads-'));
  try {
    for (const [path, content] of Object.entries(fixtureCase.vm_files))
      await vm.writeFile(path, content);
    for (const [url, body] of Object.entries(fixtureCase.cloud_urls)) web.serve(url, body);
    if (fixtureCase.execute_response) {
      const [status, json] = fixtureCase.execute_response;
      vm.answerNext('execute', { status, json });
    }
    const client = new OsworldVmServerClient({
      baseUrl: vm.url,
      retries: { controllerDelayMs: 0 },
    });
    const files = new DownloadCache({
      root: downloadsRoot,
      urlRewrites: web.urlRewrites,
      retryDelayMs: 0,
    });
    const outcome = await runGetterCase(fixtureCase, { vm: client, files, cacheDir });
    const requests = [
      ...vm.requests.map((request) =>
        request.endpoint === 'file'
          ? ['/file', (request.body as { file_path: string }).file_path]
          : ['POST', request.path, request.body],
      ),
      ...web.requests.map((url) => ['GET', url]),
    ];
    const expectedRequests = fixtureCase.requests.flatMap((request) =>
      request[0] === '/file' && !(String(request[1]) in fixtureCase.vm_files)
        ? Array.from({ length: FILE_TRIES }, () => request)
        : [request],
    );
    return { verdict: compareGetterCase(fixtureCase, outcome, requests, expectedRequests), vm };
  } finally {
    await vm.close();
    await web.close();
    await rm(cacheDir, { recursive: true, force: true });
    await rm(downloadsRoot, { recursive: true, force: true });
  }
}

describe('getters over the fake desktop, beyond the fixtures', () => {
  let vm: FakeOsworldVm;
  let web: FakeWebServer;
  let cacheDir: string;
  let downloadsRoot: string;
  let environment: Parameters<typeof runGetter>[2];

  beforeAll(async () => {
    vm = await startFakeOsworldVm();
    web = await startFakeWebServer();
    cacheDir = await mkdtemp(join(tmpdir(), 'osworld-getters-'));
    downloadsRoot = await mkdtemp(join(tmpdir(), 'osworld-downloads-'));
    environment = {
      vm: new OsworldVmServerClient({ baseUrl: vm.url, retries: { controllerDelayMs: 0 } }),
      files: new DownloadCache({
        root: downloadsRoot,
        urlRewrites: web.urlRewrites,
        retryDelayMs: 0,
      }),
      cacheDir,
      written: new Set(),
    };
  });
  afterAll(async () => {
    await vm.close();
    await web.close();
    await rm(cacheDir, { recursive: true, force: true });
    await rm(downloadsRoot, { recursive: true, force: true });
  });

  it('vm_command_line runs the command on the desktop, with ~ and /home/user meaning the desktop home', async () => {
    await vm.writeFile('~/Desktop/note.txt', 'hello');
    expect(
      await runGetter(
        'vm_command_line',
        { command: 'cat ~/Desktop/note.txt', shell: true },
        environment,
      ),
    ).toBe('hello');
    expect(
      await runGetter(
        'vm_command_line',
        { command: ['cat', '/home/user/Desktop/note.txt'] },
        environment,
      ),
    ).toBe('hello');
    // A list is never run through a shell: `|` and `grep` are operands of ls (reference §2).
    const listing = await runGetter(
      'vm_command_line',
      { command: ['ls', '/home/user/Desktop', '|', 'grep', 'note'] },
      environment,
    );
    expect(listing).toContain('/home/user/Desktop:\nnote.txt');
  });

  it('vm_command_error returns stderr; a program that does not exist is the handler’s 500, i.e. None', async () => {
    expect(
      await runGetter('vm_command_error', { command: 'echo oops >&2', shell: 'true' }, environment),
    ).toBe('oops\n');
    expect(
      await runGetter('vm_command_line', { command: ['no-such-program-xyz'] }, environment),
    ).toBeNull();
  });

  it('list_directory gives the directory_tree node as the server builds it', async () => {
    await vm.writeFile('/home/user/Desktop/cpjpg/a.jpg', 'x');
    await vm.writeFile('/home/user/Desktop/cpjpg/sub/b.jpg', 'y');
    const tree = await runGetter(
      'list_directory',
      { path: '/home/user/Desktop/cpjpg' },
      environment,
    );
    expect(tree).toEqual({
      type: 'directory',
      name: 'cpjpg',
      children: expect.arrayContaining([
        { type: 'file', name: 'a.jpg' },
        { type: 'directory', name: 'sub', children: [{ type: 'file', name: 'b.jpg' }] },
      ]),
    });
    expect(
      await runGetter('list_directory', { path: '/home/user/Desktop/missing' }, environment),
    ).toBeNull();
  });

  it('vm_file into a dest folder that does not exist raises FileNotFoundError (which evaluate() scores 0)', async () => {
    await vm.writeFile('/home/user/x.txt', 'x');
    const run = runGetter('vm_file', { path: '/home/user/x.txt', dest: "it's/x.txt" }, environment);
    // Python names the path by its repr: double quotes around a quote.
    await expect(run).rejects.toEqual(
      new PythonException(
        'FileNotFoundError',
        `[Errno 2] No such file or directory: "${join(cacheDir, "it's/x.txt")}"`,
      ),
    );
  });

  it("a dest that is not a str raises os.path.join's TypeError, a Python exception (no score)", async () => {
    await vm.writeFile('/home/user/x.txt', 'x');
    const run = runGetter('vm_file', { path: '/home/user/x.txt', dest: 5 }, environment);
    await expect(run).rejects.toEqual(
      new PythonException(
        'TypeError',
        "join() argument must be str, bytes, or os.PathLike object, not 'int'",
      ),
    );
  });

  it('vm_file writes every fetched file, also those not in gives, and reports them as written', async () => {
    await vm.writeFile('/home/user/snake/a.py', 'A');
    await vm.writeFile('/home/user/snake/b.py', 'B');
    const result = await runGetter(
      'vm_file',
      {
        path: ['/home/user/snake/a.py', '/home/user/snake/b.py'],
        dest: ['a.py', 'b.py'],
        multi: true,
      },
      environment,
    );
    expect(result).toBe(join(cacheDir, 'a.py'));
    expect(await readFile(join(cacheDir, 'b.py'), 'utf8')).toBe('B');
    expect([...(environment.written ?? [])]).toEqual(expect.arrayContaining(['a.py', 'b.py']));
  });

  it('a VM server that closes the connection is infra, never a missing file', async () => {
    const dying = await startFakeOsworldVm();
    try {
      await dying.writeFile('/home/user/f.txt', 'f');
      dying.dieOn('file');
      const run = runGetter(
        'vm_file',
        { path: '/home/user/f.txt', dest: 'f.txt' },
        {
          ...environment,
          vm: new OsworldVmServerClient({ baseUrl: dying.url, retries: { controllerDelayMs: 0 } }),
        },
      );
      await expect(run).rejects.toBeInstanceOf(VmServerUnreachableError);
    } finally {
      await dying.close();
    }
  });

  it('vscode_config: replays the eval extension command in VS Code, then fetches the file it writes', async () => {
    await vm.writeFile('/home/user/OpenProject.txt', '/home/user/project');
    const before = vm.requests.length;
    const config = {
      vscode_extension_command: 'OpenProject',
      path: '/home/user/OpenProject.txt',
      dest: 'OpenProject.txt',
    };
    expect(await runGetter('vscode_config', config, environment)).toBe(
      join(cacheDir, 'OpenProject.txt'),
    );
    const calls = vm.requests
      .slice(before)
      .map((request) =>
        request.endpoint === 'execute'
          ? (request.body as { command: string[] }).command[2]
          : request.endpoint,
      );
    expect(calls).toEqual([
      'import pyautogui; import time; pyautogui.FAILSAFE = False; import platform; print(platform.system())',
      'activate_window',
      "import pyautogui; import time; pyautogui.FAILSAFE = False; import pyautogui; pyautogui.hotkey('ctrl', 'shift', 'p');",
      "import pyautogui; import time; pyautogui.FAILSAFE = False; import pyautogui; pyautogui.typewrite('OpenProject');",
      "import pyautogui; import time; pyautogui.FAILSAFE = False; import pyautogui; pyautogui.press('enter');",
      'file',
    ]);
  });

  it('vscode_config: without that file, the workspace.json files VS Code keeps stand in; none at all gives ""', async () => {
    const config = {
      vscode_extension_command: 'OpenProject',
      path: '/home/user/NotWritten.txt',
      dest: 'workspaces.txt',
    };
    expect(await runGetter('vscode_config', config, environment)).toBe('');
    await vm.writeFile(
      '/home/user/.config/Code/User/workspaceStorage/abc/workspace.json',
      '{"folder":"file:///home/user/p"}',
    );
    expect(await runGetter('vscode_config', config, environment)).toBe(
      join(cacheDir, 'workspaces.txt'),
    );
    expect(await readFile(join(cacheDir, 'workspaces.txt'), 'utf8')).toBe(
      '{"folder":"file:///home/user/p"}',
    );
  });

  it('cloud_file: a gold host answering 5xx is infra after the retries; 404 is the HTTPError upstream raises', async () => {
    const url = 'https://huggingface.co/datasets/x/gold.txt';
    web.serve(url, 'GOLD');
    web.failNext(url, 3, 503);
    await expect(
      runGetter('cloud_file', { path: url, dest: 'gold.txt' }, environment),
    ).rejects.toMatchObject({
      name: 'DownloadFailedError',
      status: 503,
    });
    expect(await runGetter('cloud_file', { path: url, dest: 'gold.txt' }, environment)).toBe(
      join(cacheDir, 'gold.txt'),
    );
    await expect(
      runGetter(
        'cloud_file',
        { path: 'https://huggingface.co/none', dest: 'none.txt' },
        environment,
      ),
    ).rejects.toMatchObject({ type: 'HTTPError' });
    expect(posix.basename(url)).toBe('gold.txt');
  });
});
