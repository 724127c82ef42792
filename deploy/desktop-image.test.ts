import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { readDockerfile } from './dockerfile.js';
import { DEPLOY_DIR, readK8sManifests } from './k8s-manifests.js';

// deploy/desktop: the derived desktop image of graded OSWorld stacks. There is no Docker engine
// here to build it: these tests read what can be checked without one.

const DESKTOP_DIR = join(DEPLOY_DIR, 'desktop');
const instructions = readDockerfile(join(DESKTOP_DIR, 'Dockerfile'));
const of = (keyword: string) => instructions.filter((i) => i.keyword === keyword);
const argDefault = (name: string) =>
  of('ARG')
    .map((i) => /^(\w+)=(.*)$/.exec(i.args))
    .find((match) => match?.[1] === name)?.[2];

/** supervisord's INI: section → key → value (`;` comments, no continuation lines here). */
function readIni(path: string): Map<string, Map<string, string>> {
  const sections = new Map<string, Map<string, string>>();
  let current: Map<string, string> | undefined;
  for (const raw of readFileSync(path, 'utf8').split('\n')) {
    const line = raw.trim();
    if (line === '' || line.startsWith(';') || line.startsWith('#')) continue;
    const section = /^\[(.+)\]$/.exec(line);
    if (section) {
      current = new Map();
      sections.set(section[1]!, current);
      continue;
    }
    const [key, ...value] = line.split('=');
    if (!current || value.length === 0) throw new Error(`cannot read ${path} line: ${raw}`);
    current.set(key!.trim(), value.join('=').trim());
  }
  return sections;
}

describe('deploy/desktop/Dockerfile', () => {
  it("builds on Bytebot's desktop image", () => {
    expect(of('FROM').map((i) => i.args)).toEqual(['${BYTEBOT_DESKTOP_IMAGE}']);
    expect(argDefault('BYTEBOT_DESKTOP_IMAGE')).toMatch(/^ghcr\.io\/bytebot-ai\/bytebot-desktop:/);
  });

  it("fetches OSWorld's VM server from a pinned commit, each file checked against its sha256", () => {
    expect(argDefault('OSWORLD_COMMIT')).toMatch(/^[0-9a-f]{40}$/);
    const fetched = of('ADD').map((i) => {
      const match =
        /^--chown=user:user --checksum=sha256:([0-9a-f]{64}) (https:\/\/\S+) (\/home\/user\/server\/\S+)$/.exec(
          i.args,
        );
      if (!match)
        throw new Error(`ADD without --chown, a sha256 checksum or an https URL: ${i.args}`);
      return { sha256: match[1]!, url: match[2]!, to: match[3]! };
    });
    expect(fetched.map((file) => file.to)).toEqual([
      '/home/user/server/main.py',
      '/home/user/server/pyxcursor.py',
    ]);
    for (const file of fetched) {
      // The commit, never a branch: the checksum would break on the next push.
      expect(file.url).toBe(
        `https://raw.githubusercontent.com/\${OSWORLD_REPOSITORY}/\${OSWORLD_COMMIT}/desktop_env/server/${file.to.split('/').pop()}`,
      );
    }
    expect(new Set(fetched.map((file) => file.sha256)).size).toBe(2);
    // No upstream code in the repository: the build context is this directory and holds none.
    expect(existsSync(join(DESKTOP_DIR, 'main.py'))).toBe(false);
  });

  it('installs what the server imports and what its setups call, pyautogui pinned', () => {
    const run = of('RUN')
      .map((i) => i.args)
      .join(' ');
    for (const pkg of [
      'python-is-python3',
      'python3-flask',
      'python3-xlib',
      'python3-pyatspi',
      'python3-lxml',
      'python3-pil',
      'python3-requests',
      'python3-numpy',
      'wmctrl',
      'unzip',
      'libglib2.0-bin',
    ])
      expect(run.split(' ')).toContain(pkg);
    expect(run).toMatch(/pip3 install --no-cache-dir pyautogui==\d+\.\d+\.\d+/);
    // Checked at build time where no display is needed.
    expect(run).toContain(
      'python -c "import flask, lxml.etree, PIL.Image, requests, numpy, Xlib.display, pyatspi"',
    );
  });

  it("runs the server under the image's supervisord, in the config its CMD reads, as user in /home/user on :0, port 5000 exposed", () => {
    const cmd = JSON.parse(of('CMD').at(-1)!.args) as string[];
    expect(cmd).toEqual([
      '/usr/bin/supervisord',
      '-c',
      '/etc/supervisor/conf.d/supervisord.conf',
      '-n',
    ]);
    const [copied] = of('COPY').map((i) => i.args.split(' '));
    expect(copied).toEqual(['osworld-server.conf', '/tmp/osworld-server.conf']);
    expect(
      of('RUN')
        .map((i) => i.args)
        .join(' '),
    ).toContain(`cat /tmp/osworld-server.conf >> ${cmd[2]}`);
    const program = readIni(join(DESKTOP_DIR, 'osworld-server.conf')).get('program:osworld-server');
    expect(program).toBeDefined();
    expect(Object.fromEntries(program!)).toMatchObject({
      command: '/usr/bin/python /home/user/server/main.py',
      user: 'user',
      directory: '/home/user',
      autostart: 'true',
      autorestart: 'true',
      stopasgroup: 'true',
      killasgroup: 'true',
    });
    const environment = Object.fromEntries(
      program!
        .get('environment')!
        .split(',')
        .map((pair) => pair.split('=') as [string, string])
        .map(([key, value]) => [key, JSON.parse(value) as string]),
    );
    expect(environment).toMatchObject({ HOME: '/home/user', USER: 'user', DISPLAY: ':0' });
    expect(of('EXPOSE').flatMap((i) => i.args.split(' '))).toContain('5000');
  });

  it('is the image the compose file builds and the manifests run for every desktop', () => {
    const compose = parse(readFileSync(join(DEPLOY_DIR, 'compose.yaml'), 'utf8'), {
      merge: true,
    }) as { services: Record<string, { image?: string; build?: { context: string } }> };
    const desktops = Object.values(compose.services).filter(
      (service) => service.image === 'benchfleet-desktop:local',
    );
    expect(desktops.length).toBeGreaterThanOrEqual(2);
    for (const desktop of desktops)
      expect(join(DEPLOY_DIR, desktop.build!.context, 'Dockerfile')).toBe(
        join(DESKTOP_DIR, 'Dockerfile'),
      );
    const manifests = JSON.stringify(readK8sManifests().map((document) => document.object));
    expect(manifests).toContain('"image":"benchfleet-desktop"');
    expect(manifests).not.toContain('bytebot-ai/bytebot-desktop');
  });
});
