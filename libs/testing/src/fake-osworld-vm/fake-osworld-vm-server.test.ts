import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeOsworldVm, type FakeOsworldVm } from './fake-osworld-vm-server.js';
import { startFakeWebServer } from './fake-web-server.js';
import { shlexSplit } from './python-shlex.js';

describe('shlexSplit (Python shlex.split, POSIX)', () => {
  it.each([
    ['a b  c', ['a', 'b', 'c']],
    [`echo "a b" 'c d'`, ['echo', 'a b', 'c d']],
    [`a\\ b`, ['a b']],
    [`"x\\"y" "p\\q"`, ['x"y', 'p\\q']],
    [`''`, ['']],
    [`a#b # c`, ['a#b', '#', 'c']],
  ])('%s', (input, expected) => {
    expect(shlexSplit(input)).toEqual(expected);
  });

  it('raises Python’s ValueErrors', () => {
    expect(() => shlexSplit(`"open`)).toThrow('No closing quotation');
    expect(() => shlexSplit('trailing\\')).toThrow('No escaped character');
  });
});

describe('the fake VM server', () => {
  let vm: FakeOsworldVm;
  const post = async (path: string, body: unknown) => {
    const response = await fetch(vm.url + path, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    const text = await response.text();
    return { status: response.status, text, json: safeJson(text) };
  };

  beforeAll(async () => {
    vm = await startFakeOsworldVm({ executeTimeoutMs: 1_000, mounts: ['/p'] });
  });
  afterAll(async () => {
    await vm.close();
  });

  it('runs commands for real in the sandbox home, `~/` and /home/user mapped, output mapped back', async () => {
    const answer = await post('/execute', { command: ['sh', '-c', 'pwd; echo $HOME', '~/x'] });
    expect(answer.json).toEqual({
      status: 'success',
      output: '/home/user\n/home/user\n',
      error: '',
      returncode: 0,
    });
    await post('/setup/execute', {
      command: 'mkdir -p /home/user/Desktop/d && touch /p/q',
      shell: 'true',
    });
    expect(await vm.exists('~/Desktop/d')).toBe(true);
    expect(await vm.exists('/p/q')).toBe(true);
  });

  it('splits a string command with shlex when shell is false; a bad quote is Flask’s unhandled 500', async () => {
    expect((await post('/execute', { command: `printf '%s|' "a b" c` })).json).toMatchObject({
      output: 'a b|c|',
    });
    const broken = await post('/execute', { command: `echo "open` });
    expect(broken.status).toBe(500);
    expect(broken.text).toContain('<title>500 Internal Server Error</title>');
  });

  it('text mode: \\r\\n in the output reads as \\n', async () => {
    expect(
      (await post('/execute', { command: `printf 'a\\r\\nb\\rc'`, shell: true })).json,
    ).toMatchObject({ output: 'a\nb\nc' });
  });

  it('a command past the timeout is the handler’s 500 with Python’s message', async () => {
    const answer = await post('/execute', { command: ['sleep', '30'] });
    expect(answer).toMatchObject({
      status: 500,
      json: { status: 'error', message: "Command '['sleep', '30']' timed out after 1 seconds" },
    });
  });

  it('launch starts the process, records it, and close() stops it', async () => {
    const answer = await post('/setup/launch', { command: 'sleep 60' });
    expect(answer).toMatchObject({ status: 200, text: 'sleep 60 launched successfully' });
    const launched = vm.launches.at(-1);
    expect(launched).toMatchObject({ command: 'sleep 60', shell: false, started: ['sleep', '60'] });
    expect(launched?.pid).toBeGreaterThan(0);
    expect(() => process.kill(launched?.pid ?? 0, 0)).not.toThrow();
    expect((await post('/setup/launch', { command: ['no-such-app-xyz'] })).status).toBe(500);
  });

  it('/file serves bytes, expands ~ and $HOME, 404s a missing file and 500s a directory', async () => {
    await vm.writeFile('/home/user/f.txt', 'F');
    const form = (path: string) =>
      fetch(`${vm.url}/file`, { method: 'POST', body: new URLSearchParams({ file_path: path }) });
    expect(await (await form('~/f.txt')).text()).toBe('F');
    expect(await (await form('$HOME/f.txt')).text()).toBe('F');
    expect(await (await form('f.txt')).text()).toBe('F');
    const missing = await form('/home/user/none');
    expect([missing.status, await missing.json()]).toEqual([404, { error: 'File not found' }]);
    const directory = await form('/home/user');
    expect(directory.status).toBe(500);
    expect(await directory.json()).toEqual({
      error: "Failed to serve file: [Errno 21] Is a directory: '/home/user'",
    });
  });

  it('/setup/upload refuses a path outside the sandbox and needs both form fields', async () => {
    const upload = (path: string | null) => {
      const form = new FormData();
      if (path !== null) form.append('file_path', path);
      form.append('file_data', new Blob(['x']), 'x');
      return fetch(`${vm.url}/setup/upload`, { method: 'POST', body: form });
    };
    expect((await upload('/etc/benchfleet-should-not-exist')).status).toBe(500);
    const missingPath = await upload(null);
    expect([missingPath.status, await missingPath.json()]).toEqual([
      400,
      { error: 'file_path and file_data are required' },
    ]);
  });

  it('/list_directory does not expand ~, and names the root "" when the path ends in /', async () => {
    await vm.writeFile('/home/user/tree/a', 'a');
    expect((await post('/list_directory', { path: '/home/user/tree/' })).json).toEqual({
      directory_tree: { type: 'directory', name: '', children: [{ type: 'file', name: 'a' }] },
    });
    expect((await post('/list_directory', { path: '~/tree' })).status).toBe(400);
    expect((await post('/list_directory', {})).json).toEqual({ error: "Missing 'path' parameter" });
  });

  it('controls: scripted answers, faults, counts', async () => {
    vm.answerNext('platform', { status: 200, text: 'Windows' });
    expect(await (await fetch(`${vm.url}/platform`)).text()).toBe('Windows');
    expect(await (await fetch(`${vm.url}/platform`)).text()).toBe('Linux');
    vm.failNext('terminal', 2, 503);
    expect((await fetch(`${vm.url}/terminal`)).status).toBe(503);
    expect((await fetch(`${vm.url}/terminal`)).status).toBe(503);
    expect((await fetch(`${vm.url}/terminal`)).status).toBe(200);
    expect(vm.count('platform')).toBe(2);
  });

  it('shell() runs as a user in a terminal would: in the sandbox home, no request recorded, even with the server dead', async () => {
    const desktop = await startFakeOsworldVm();
    try {
      await desktop.writeFile('~/Desktop/a.txt', 'A');
      await desktop.kill();
      const result = await desktop.shell(
        'mv ~/Desktop/a.txt /home/user/b.txt && ls /home/user && pwd',
      );
      expect(result).toEqual({ stdout: 'Desktop\nb.txt\n/home/user\n', stderr: '', returncode: 0 });
      expect(await desktop.exists('/home/user/b.txt')).toBe(true);
      expect((await desktop.shell('exit 3')).returncode).toBe(3);
      expect(desktop.requests).toEqual([]);
    } finally {
      await desktop.close();
    }
  });

  it('dieOn closes the connection unanswered and the server stays down', async () => {
    const dying = await startFakeOsworldVm();
    try {
      dying.dieOn('screenshot');
      await expect(fetch(`${dying.url}/screenshot`)).rejects.toThrow();
      await expect(fetch(`${dying.url}/platform`)).rejects.toThrow();
    } finally {
      await dying.close();
    }
  });
});

describe('the fake web host', () => {
  it('serves by original URL through its rewrites, fails on demand, logs requests', async () => {
    const web = await startFakeWebServer();
    try {
      const mirrored = (url: string) => web.urlRewrites[0]?.to + url.slice('https://'.length);
      web.serve('https://host.example/a%20b.txt', 'AB');
      web.failNext('https://host.example/a%20b.txt', 1, 500);
      expect((await fetch(mirrored('https://host.example/a%20b.txt'))).status).toBe(500);
      expect(await (await fetch(mirrored('https://host.example/a%20b.txt'))).text()).toBe('AB');
      expect((await fetch(mirrored('https://host.example/none'))).status).toBe(404);
      web.failNext('https://host.example/a%20b.txt', 1, 'reset');
      await expect(fetch(mirrored('https://host.example/a%20b.txt'))).rejects.toThrow();
      expect(web.requests).toEqual([
        'https://host.example/a%20b.txt',
        'https://host.example/a%20b.txt',
        'https://host.example/none',
        'https://host.example/a%20b.txt',
      ]);
    } finally {
      await web.close();
    }
  });
});

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}
