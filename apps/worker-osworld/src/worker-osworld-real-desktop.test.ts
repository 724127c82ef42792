import { execFile } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ensureDockerEngine,
  startRealDesktop,
  waitFor,
  type RealDesktop,
} from '@benchfleet/testing';

// The real desktop image (deploy/desktop, built here or reused when its inputs are unchanged):
// bytebotd, XFCE and OSWorld's own VM server in a container, what its label says it has, and a
// reset that recreates it from the image. Tasks of every domain are graded on it through the fleet
// by worker-osworld-real-desktop-upstream.test.ts (both graders, one desktop image).

const engine = await ensureDockerEngine();
if (!engine.available) process.stderr.write(`real-desktop tests skipped: ${engine.reason}\n`);

const log = (line: string) => process.stderr.write(`[real-desktop] ${line}\n`);
let desktop: RealDesktop;

/** The images may be built first: a fresh machine installs a whole desktop (see bench/README). */
const FIRST_BUILD_MS = 90 * 60_000;

async function vmExecute(command: string[] | string, shell = false) {
  const response = await fetch(`${desktop.vmServerUrl}/setup/execute`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ command, shell }),
    signal: AbortSignal.timeout(120_000),
  });
  return (await response.json()) as { output?: string; error?: string; returncode?: number };
}

async function vmLaunch(command: string[]): Promise<void> {
  const response = await fetch(`${desktop.vmServerUrl}/setup/launch`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ command }),
    signal: AbortSignal.timeout(60_000),
  });
  expect(response.status, await response.text()).toBe(200);
}

describe.skipIf(!engine.available)('a real desktop', () => {
  beforeAll(async () => {
    const started = await startRealDesktop({ name: 'fleet', log });
    if (!started.available) throw new Error(started.reason);
    desktop = started.desktop;
  }, FIRST_BUILD_MS);

  afterAll(async () => {
    await desktop?.close();
  });

  describe('the image', () => {
    it('says in its label what it has, and has it: Chromium answers DevTools as the tasks launch Chrome', async () => {
      const { label } = desktop;
      expect(label.base.route).toBe('local');
      expect(label.screen).toBe('1280x960');
      for (const app of [
        'chromium',
        'thunderbird',
        'libreoffice-calc',
        'libreoffice-impress',
        'gimp',
        'vlc',
        'nautilus',
        'gnome-terminal',
      ])
        expect(label.apps[app], app).toMatch(/\d/);
      expect(label.apps).toMatchObject({ chrome: null, vscode: null });
      expect(label.substitutions).toContainEqual(
        expect.objectContaining({ for: 'google-chrome', by: 'chromium' }),
      );
      // Every command the label calls present is on the user's PATH, and every absent one is not.
      const listed = Object.entries(label.commands);
      const found = await desktop.exec(
        listed.map(([name]) => `command -v ${name} >/dev/null && echo ${name}`).join('; '),
      );
      expect(found.stdout.trim().split('\n').sort()).toEqual(
        listed
          .filter(([, where]) => where !== null)
          .map(([name]) => name)
          .sort(),
      );

      // As multi_apps and chrome tasks set Chrome up: launched through the VM server, then socat.
      await vmLaunch(['google-chrome', '--remote-debugging-port=1337']);
      await vmLaunch(['socat', 'tcp-listen:9222,fork', 'tcp:localhost:1337']);
      const version = await waitFor(
        'DevTools on the desktop port 9222',
        async () => {
          const answer = await fetch(`${desktop.devtoolsUrl}/json/version`, {
            signal: AbortSignal.timeout(5_000),
          }).catch(() => null);
          return answer?.ok ? ((await answer.json()) as { Browser: string }) : undefined;
        },
        600_000,
        500,
      );
      expect(version.Browser).toMatch(/^Chrome\/\d+/);
      // Chrome's own profile directory, which OSWorld's Chrome getters read.
      const profile = await vmExecute('ls ~/.config/google-chrome', true);
      expect(profile.output).toContain('Default');

      // The server's one-liners find pyautogui on the desktop's screen.
      const size = await vmExecute(['python', '-c', 'import pyautogui; print(pyautogui.size())']);
      expect(size.output?.trim()).toBe('Size(width=1280, height=960)');
    });

    it('a reset recreates the container from its image: nothing a task left survives', async () => {
      const left = await desktop.exec(
        'echo left > ~/left-behind.txt && mkdir -p ~/Desktop/leftover',
      );
      expect(left.code, left.stderr).toBe(0);
      const recreated = await new Promise<string>((resolve, reject) =>
        execFile('/bin/sh', ['-c', desktop.resetCommand], (error, stdout, stderr) =>
          error ? reject(new Error(`${error.message}: ${stderr}`)) : resolve(stdout),
        ),
      );
      expect(recreated).toMatch(
        /^recreated container benchfleet-desktop-fleet-\w+ \(\w{12} → \w{12}\)\n$/,
      );
      log(`reset, then ready in ${await desktop.waitUntilReady()} ms`);
      const after = await desktop.exec('ls ~/left-behind.txt ~/Desktop/leftover 2>&1; hostname');
      expect(after.stdout.match(/No such file or directory/g)).toHaveLength(2);
      expect(after.stdout.trim().split('\n').at(-1)).toBe('computer');
    });
  });
});
