import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import { createServer as createTcpServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TransientError } from '@benchfleet/core';
import {
  chromiumPrerequisite,
  startFakeOsworldVm,
  startFakeWebServer,
  type FakeOsworldVm,
  type FakeWebServer,
} from '@benchfleet/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DownloadCache } from '../downloads/download-cache.js';
import { SetupFailedError, VmServerUnreachableError } from '../grading/grading-errors.js';
import { OsworldVmServerClient } from '../vm-server/osworld-vm-server-client.js';
import {
  STOCK_DESKTOP,
  substituteForDesktop,
  substituteForStockDesktop,
} from './desktop-substitutions.js';
import { runSetup, type SetupEnvironment } from './setup-runner.js';

let vm: FakeOsworldVm;
let web: FakeWebServer;
let cacheDir: string;
let downloadsRoot: string;
let environment: SetupEnvironment;

beforeAll(async () => {
  vm = await startFakeOsworldVm({ apps: ['firefox', 'thunar', 'xfce4-terminal', 'code'] });
  web = await startFakeWebServer();
  cacheDir = await mkdtemp(join(tmpdir(), 'setup-cache-'));
  downloadsRoot = await mkdtemp(join(tmpdir(), 'setup-downloads-'));
  environment = {
    vm: new OsworldVmServerClient({ baseUrl: vm.url }),
    downloads: new DownloadCache({
      root: downloadsRoot,
      urlRewrites: web.urlRewrites,
      retryDelayMs: 0,
    }),
    cacheDir,
    screen: { width: 1280, height: 960 },
    clientPassword: 'sekret-pw',
  };
});
afterAll(async () => {
  await vm.close();
  await web.close();
  await rm(cacheDir, { recursive: true, force: true });
  await rm(downloadsRoot, { recursive: true, force: true });
});

const steps = (raw: unknown[]) => substituteForStockDesktop(raw).steps;

describe('runSetup', () => {
  it('replaces placeholders with the real screen size and the password, and never reports the password', async () => {
    const reports = await runSetup(
      steps([
        {
          type: 'execute',
          parameters: {
            command: [
              'sh',
              '-c',
              'echo {SCREEN_WIDTH}x{SCREEN_HEIGHT} {SCREEN_WIDTH_HALF},{SCREEN_HEIGHT_HALF} {CLIENT_PASSWORD}',
            ],
            stdout: 'placeholders.out',
          },
        },
      ]),
      environment,
    );
    expect(await readFile(join(cacheDir, 'placeholders.out'), 'utf8')).toBe(
      '1280x960 640,480 sekret-pw\n',
    );
    expect(JSON.stringify(reports)).not.toContain('sekret-pw');
    expect(reports).toEqual([
      { number: 1, type: 'execute', outcome: 'done', captures: ['placeholders.out'] },
    ]);
    // A server error that echoes the command does not carry the password into the report.
    vm.answerNext('execute', {
      status: 500,
      json: {
        status: 'error',
        message: "Command 'echo sekret-pw | sudo -S true' timed out after 120 seconds",
      },
    });
    const [timedOut] = await runSetup(
      steps([
        {
          type: 'execute',
          parameters: { command: 'echo {CLIENT_PASSWORD} | sudo -S true', shell: true },
        },
      ]),
      environment,
    );
    expect(timedOut?.detail).toBe(
      "HTTP 500: Command 'echo *** | sudo -S true' timed out after 120 seconds",
    );
  });

  it('execute: a string without shell is shlex-split by the server; stdout and stderr go to capture files', async () => {
    await runSetup(
      steps([
        {
          type: 'command',
          parameters: {
            command: `sh -c "printf '%s|' 'a b' c; echo oops >&2"`,
            stdout: 'o.txt',
            stderr: 'e.txt',
          },
        },
      ]),
      environment,
    );
    expect(await readFile(join(cacheDir, 'o.txt'), 'utf8')).toBe('a b|c|');
    expect(await readFile(join(cacheDir, 'e.txt'), 'utf8')).toBe('oops\n');
  });

  it('launch: the host splits a plain string on whitespace (not shlex) before sending it', async () => {
    await runSetup(
      steps([{ type: 'launch', parameters: { command: 'code "/home/user/a b"' } }]),
      environment,
    );
    expect(vm.launches.at(-1)?.command).toEqual(['code', '"/home/user/a', 'b"']);
  });

  it('answers upstream only logs do not fail the setup: a missing program, a failed launch, a 400 window action', async () => {
    const reports = await runSetup(
      steps([
        { type: 'execute', parameters: { command: ['no-such-program-xyz'] } },
        { type: 'launch', parameters: { command: ['no-such-app-xyz'] } },
        { type: 'activate_window', parameters: { window_name: '' } },
        {
          type: 'close_window',
          parameters: { window_name: 'Mail.thunderbird', strict: true, by_class: true },
        },
        { type: 'sleep', parameters: { seconds: 0.01 } },
      ]),
      environment,
    );
    expect(reports.map((report) => report.outcome)).toEqual([
      'ignored',
      'ignored',
      'ignored',
      'done',
      'done',
    ]);
    expect(vm.windowActions.at(-1)).toEqual({
      action: 'close',
      window_name: 'Mail.thunderbird',
      strict: true,
      by_class: true,
    });
  });

  it('execute with `until` repeats every 0.3 s until it holds; an answer that misses it is not a failure', async () => {
    const counter =
      'n=$(cat ~/count 2>/dev/null || echo 0); n=$((n+1)); echo $n > ~/count; echo try $n';
    const [report] = await runSetup(
      steps([
        {
          type: 'execute',
          parameters: {
            command: counter,
            shell: true,
            until: { stdout: 'try 3' },
            stdout: 'tries.out',
          },
        },
      ]),
      environment,
    );
    expect(report?.outcome).toBe('done');
    expect(await readFile(join(cacheDir, 'tries.out'), 'utf8')).toBe('try 3\n');
    vm.answerNext('execute', { status: 500, json: { status: 'error', message: 'boom' } }, 5);
    const [failing] = await runSetup(
      steps([
        { type: 'execute', parameters: { command: 'true', shell: true, until: { returncode: 0 } } },
      ]),
      environment,
    );
    expect(failing).toMatchObject({ outcome: 'ignored', detail: 'HTTP 500: boom' });
  });

  it('download: fetched by the worker, uploaded to the path as written (relative = /home/user), cached with its sha256', async () => {
    const url =
      'https://huggingface.co/datasets/xlangai/ubuntu_osworld_file_cache/resolve/main/os/x/setup.sh';
    web.serve(url, 'echo set up > ~/done.txt\n');
    const download = {
      type: 'download',
      parameters: {
        files: [
          { url, path: 'setup.sh' },
          { url, path: '~/Desktop/copy.sh' },
        ],
      },
    };
    const [report] = await runSetup(
      steps([download, { type: 'execute', parameters: { command: 'sh setup.sh', shell: true } }]),
      environment,
    );
    expect((await vm.readFile('/home/user/done.txt')).toString()).toBe('set up\n');
    expect((await vm.readFile('/home/user/Desktop/copy.sh')).toString()).toBe(
      'echo set up > ~/done.txt\n',
    );
    expect(report?.downloads).toEqual([
      expect.objectContaining({ url, path: 'setup.sh', size: 25, fromCache: false }),
      expect.objectContaining({ url, path: '~/Desktop/copy.sh', fromCache: true }),
    ]);
    expect(web.requests.filter((requested) => requested === url)).toHaveLength(1);
  });

  it('a download that fails is "Setup step N failed", an infra fault', async () => {
    const url = 'https://huggingface.co/datasets/x/broken.zip';
    web.serve(url, 'zip');
    web.failNext(url, 3, 500);
    const error = await runSetup(
      steps([
        { type: 'sleep', parameters: { seconds: 0 } },
        { type: 'download', parameters: { files: [{ url, path: '/home/user/broken.zip' }] } },
      ]),
      environment,
    ).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(SetupFailedError);
    expect(error).toBeInstanceOf(TransientError);
    expect((error as Error).message).toBe(
      `Setup step 2 failed: _download_setup - download of ${url} failed: HTTP 500`,
    );
    expect(await vm.exists('/home/user/broken.zip')).toBe(false);
  });

  it('an upload the server refuses fails the step; so do parameters the step does not take', async () => {
    const url = 'https://huggingface.co/datasets/x/ok.txt';
    web.serve(url, 'ok');
    await expect(
      runSetup(
        steps([{ type: 'download', parameters: { files: [{ url, path: '/etc/outside.txt' }] } }]),
        environment,
      ),
    ).rejects.toThrow(/^Setup step 1 failed: _download_setup - Upload failed with status 500/);
    await expect(
      runSetup(
        steps([{ type: 'execute', parameters: { command: 'true', bogus: 1 } }]),
        environment,
      ),
    ).rejects.toThrow(
      "Setup step 1 failed: _execute_setup - _execute_setup() got an unexpected keyword argument 'bogus'",
    );
    await expect(
      runSetup(steps([{ type: 'launch', parameters: { command: [] } }]), environment),
    ).rejects.toThrow('Setup step 1 failed: _launch_setup - Empty command to launch.');
    // Python's wording: "argument" for one missing parameter (not "argument(s)").
    await expect(
      runSetup(steps([{ type: 'execute', parameters: { stdout: 'out.txt' } }]), environment),
    ).rejects.toThrow(
      "Setup step 1 failed: _execute_setup - _execute_setup() missing 1 required positional argument: 'command'",
    );
  });

  it('open: the server opens the file (or starts the program) and answers once its window shows', async () => {
    await vm.writeFile('/home/user/Desktop/report.docx', 'a document');
    const reports = await runSetup(
      steps([
        { type: 'open', parameters: { path: '/home/user/Desktop/report.docx' } },
        { type: 'open', parameters: { path: 'code' } },
      ]),
      environment,
    );
    expect(reports).toEqual([
      {
        number: 1,
        type: 'open',
        outcome: 'done',
        detail: 'File opened and window activated successfully',
      },
      {
        number: 2,
        type: 'open',
        outcome: 'done',
        detail: 'File opened and window activated successfully',
      },
    ]);
    expect(vm.opened).toContain('/home/user/Desktop/report.docx');
    expect(vm.launches.map((launch) => launch.command)).toContainEqual(['code']);
    const posted = vm.requests.filter((request) => request.endpoint === 'open_file');
    expect(posted.map((request) => request.body)).toEqual([
      { path: '/home/user/Desktop/report.docx' },
      { path: 'code' },
    ]);
  });

  it('open fails the setup as upstream raises: no path, a file the desktop lacks, any non-2xx', async () => {
    await expect(
      runSetup(steps([{ type: 'open', parameters: { path: '' } }]), environment),
    ).rejects.toThrow('Setup step 1 failed: _open_setup - Setup Open - Invalid path ().');
    await expect(runSetup(steps([{ type: 'open', parameters: {} }]), environment)).rejects.toThrow(
      "Setup step 1 failed: _open_setup - _open_setup() missing 1 required positional argument: 'path'",
    );
    const missing = runSetup(
      steps([{ type: 'open', parameters: { path: '/home/user/nowhere.xlsx' } }]),
      environment,
    );
    await expect(missing).rejects.toBeInstanceOf(SetupFailedError);
    await expect(missing).rejects.toThrow(
      "Setup step 1 failed: _open_setup - Failed to open file '/home/user/nowhere.xlsx': the VM server answered HTTP 404: Application/file not found: /home/user/nowhere.xlsx",
    );
    // The server's own 500 (no window within its 1800 s) is a fault of the desktop: infra too.
    await vm.writeFile('/home/user/slow.ods', 'x');
    vm.answerNext('open_file', {
      status: 500,
      text: 'Failed to find window for slow.ods within 1800 seconds.',
    });
    await expect(
      runSetup(steps([{ type: 'open', parameters: { path: '/home/user/slow.ods' } }]), environment),
    ).rejects.toBeInstanceOf(SetupFailedError);
  });

  it('a VM server that does not answer the probe is infra before any step runs', async () => {
    const gone = await startFakeOsworldVm();
    await gone.close();
    const run = runSetup(steps([{ type: 'sleep', parameters: { seconds: 0 } }]), {
      ...environment,
      vm: new OsworldVmServerClient({
        baseUrl: gone.url,
        retries: { probeAttempts: 2, probeDelayMs: 0 },
      }),
    });
    await expect(run).rejects.toBeInstanceOf(VmServerUnreachableError);
  });
});

describe('the stock-desktop substitutions, run', () => {
  // multi_apps/74d5859f's config, whose Chrome and Nautilus the stock Bytebot desktop lacks.
  const chromeTask = [
    { type: 'launch', parameters: { command: ['google-chrome', '--remote-debugging-port=1337'] } },
    {
      type: 'launch',
      parameters: { command: ['socat', 'tcp-listen:9222,fork', 'tcp:localhost:1337'] },
    },
    { type: 'chrome_open_tabs', parameters: { urls_to_open: ['https://webext.eu'] } },
    { type: 'execute', parameters: { command: ['mkdir', '-p', '/home/user/Projects'] } },
    { type: 'launch', parameters: { command: ['nautilus', '/home/user/Projects'] } },
  ];

  it('Firefox opens the tabs, Thunar the folder; the Chrome launch is dropped, socat runs as written', async () => {
    const { steps: effective, substitutions } = substituteForStockDesktop(chromeTask);
    expect(substitutions).toEqual(['firefox-for-chrome', 'thunar-for-nautilus']);
    expect(effective.map((step) => step.type)).toEqual([
      'noop',
      'launch',
      'firefox_open_tabs',
      'execute',
      'launch',
    ]);
    const before = (await vm.appRuns()).length;
    const reports = await runSetup(effective, environment);
    expect(reports.map((report) => [report.number, report.outcome, report.substitution])).toEqual([
      [1, 'skipped', 'firefox-for-chrome'],
      [2, expect.any(String), undefined],
      [3, 'done', 'firefox-for-chrome'],
      [4, 'done', undefined],
      [5, 'done', 'thunar-for-nautilus'],
    ]);
    await expect
      .poll(async () => (await vm.appRuns()).slice(before))
      .toEqual(
        expect.arrayContaining([
          ['firefox', 'https://webext.eu'],
          ['thunar', '/home/user/Projects'],
        ]),
      );
  });

  it('a Chrome launch without tabs becomes a Firefox launch; gnome-terminal becomes xfce4-terminal', () => {
    const { steps: effective, substitutions } = substituteForStockDesktop([
      {
        type: 'launch',
        parameters: { command: ['google-chrome', '--remote-debugging-port=1337'] },
      },
      { type: 'activate_window', parameters: { window_name: 'Google Chrome' } },
      {
        type: 'execute',
        parameters: {
          command:
            "export DBUS_SESSION_BUS_ADDRESS='unix:path=/run/user/1000/bus'\ngnome-terminal --maximize --working-directory=/home/user",
          shell: true,
        },
      },
      {
        type: 'execute',
        parameters: { command: ['/bin/bash', '-c', 'killall gnome-terminal-server'] },
      },
    ]);
    expect(substitutions).toEqual(['firefox-for-chrome', 'xfce4-terminal-for-gnome-terminal']);
    expect(effective.map((step) => step.parameters)).toEqual([
      { command: ['firefox'] },
      { window_name: 'Mozilla Firefox' },
      {
        command:
          "export DBUS_SESSION_BUS_ADDRESS='unix:path=/run/user/1000/bus'\nxfce4-terminal --maximize --working-directory=/home/user",
        shell: true,
      },
      { command: ['/bin/bash', '-c', 'killall xfce4-terminal'] },
    ]);
  });
});

describe('chrome_open_tabs over Chrome DevTools, as upstream runs it', () => {
  // Debian's Chromium, started here with DevTools on a port it picks; pages from a local web host.
  let chrome: ChildProcess;
  let devTools: string;
  let profile: string;
  let site: Server;
  let siteUrl: string;

  beforeAll(async () => {
    site = createServer((req, res) =>
      res
        .writeHead(200, { 'content-type': 'text/html' })
        .end(`<title>${req.url ?? ''}</title><p>page ${req.url ?? ''}</p>`),
    );
    await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', resolve));
    siteUrl = `http://127.0.0.1:${(site.address() as AddressInfo).port}`;
    profile = await mkdtemp(join(tmpdir(), 'setup-chromium-'));
    chrome = spawn(
      chromiumPrerequisite().path,
      [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--no-first-run',
        '--disable-background-networking',
        '--remote-debugging-address=127.0.0.1',
        '--remote-debugging-port=0',
        `--user-data-dir=${profile}`,
        'about:blank',
      ],
      { stdio: ['ignore', 'ignore', 'pipe'] },
    );
    devTools = await new Promise<string>((resolve, reject) => {
      let said = '';
      chrome.stderr?.on('data', (chunk: Buffer) => {
        said += chunk.toString();
        const port = /DevTools listening on ws:\/\/[^:]+:(\d+)\//.exec(said)?.[1];
        if (port) resolve(`http://127.0.0.1:${port}`);
      });
      chrome.on('exit', (code) => reject(new Error(`chromium exited (${code}): ${said}`)));
    });
  });

  afterAll(async () => {
    chrome?.kill('SIGKILL');
    await new Promise<void>((resolve) => site?.close(() => resolve()));
    await rm(profile, { recursive: true, force: true });
  });

  /** The browser's tabs, as DevTools lists them. */
  const tabUrls = async () => {
    const targets = (await (await fetch(`${devTools}/json/list`)).json()) as {
      type: string;
      url: string;
    }[];
    return targets.filter((target) => target.type === 'page').map((target) => target.url);
  };

  const openTabs = (urls: unknown) =>
    substituteForDesktop([{ type: 'chrome_open_tabs', parameters: { urls_to_open: urls } }], {
      ...STOCK_DESKTOP,
      standIns: new Set(),
    }).steps;

  it('opens each URL in a new tab and closes the tab Chrome started with; the browser stays up', async () => {
    expect(await tabUrls()).toEqual(['about:blank']);
    const urls = [`${siteUrl}/first`, `${siteUrl}/second`];
    const [report] = await runSetup(openTabs(urls), {
      ...environment,
      chrome: { url: devTools, tries: 3, intervalMs: 100 },
    });
    expect(report).toMatchObject({ number: 1, type: 'chrome_open_tabs', outcome: 'done' });
    expect((await tabUrls()).sort()).toEqual(urls);
  });

  it('chrome_close_tabs closes the first tab whose URL compare_urls takes as the same; others stay', async () => {
    const urls = [`${siteUrl}/`, `${siteUrl}/keep`, `${siteUrl}/close-me`, `${siteUrl}/close-me`];
    const steps = substituteForDesktop(
      [
        { type: 'chrome_open_tabs', parameters: { urls_to_open: urls } },
        // No trailing slash, and a URL no tab shows: upstream passes over it.
        {
          type: 'chrome_close_tabs',
          parameters: { urls_to_close: [siteUrl, `${siteUrl}/close-me`, `${siteUrl}/never`] },
        },
      ],
      { ...STOCK_DESKTOP, standIns: new Set() },
    ).steps;
    const reports = await runSetup(steps, {
      ...environment,
      chrome: { url: devTools, tries: 3, intervalMs: 100, closeTabsWaitMs: 0 },
    });
    expect(reports[1]).toMatchObject({
      number: 2,
      type: 'chrome_close_tabs',
      outcome: 'done',
      detail: `closed 2 tab(s) over ${devTools}; no tab showed (upstream passes over it): ${siteUrl}/never`,
    });
    const left = await tabUrls();
    expect(
      ['/', '/keep', '/close-me'].map(
        (path) => left.filter((url) => url === siteUrl + path).length,
      ),
    ).toEqual([0, 1, 1]);
    // Upstream's `return browser, context` with no URL: `context` is unbound.
    const none = substituteForDesktop(
      [{ type: 'chrome_close_tabs', parameters: { urls_to_close: [] } }],
      { ...STOCK_DESKTOP, standIns: new Set() },
    ).steps;
    await expect(
      runSetup(none, { ...environment, chrome: { url: devTools, closeTabsWaitMs: 0 } }),
    ).rejects.toThrow(
      "Setup step 1 failed: _chrome_close_tabs_setup - cannot access local variable 'context'",
    );
  });

  it('no DevTools answering: the step fails after the tries, as an infra fault (retried, never scored)', async () => {
    // A port that takes connections and closes them at once, counting the tries.
    let connections = 0;
    const refuser = createTcpServer((socket) => {
      connections++;
      socket.destroy();
    });
    await new Promise<void>((resolve) => refuser.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(refuser.address() as AddressInfo).port}`;
    try {
      const run = runSetup(openTabs([`${siteUrl}/never`]), {
        ...environment,
        chrome: { url, tries: 3, intervalMs: 10, connectTimeoutMs: 5_000 },
      });
      await expect(run).rejects.toBeInstanceOf(SetupFailedError);
      await expect(run).rejects.toBeInstanceOf(TransientError);
      await expect(run).rejects.toThrow(
        new RegExp(
          `^Setup step 1 failed: _chrome_open_tabs_setup - no Chrome DevTools at ${url} after 3 tries: `,
        ),
      );
      expect(connections).toBe(3);
    } finally {
      await new Promise<void>((resolve) => refuser.close(() => resolve()));
    }
  });

  it('a desktop without DevTools (the stock one) still refuses chrome_open_tabs as written', async () => {
    await expect(runSetup(openTabs([`${siteUrl}/x`]), environment)).rejects.toThrow(
      'Setup step 1 failed: _chrome_open_tabs_setup - Chrome DevTools (port 9222) is not available on this desktop',
    );
  });
});
