import { chmod, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  chromiumPrerequisite,
  ensureDebianPrerequisite,
  MissingPrerequisiteError,
  type DebianPrerequisite,
} from './debian-prerequisite.js';

// A fake apt-get on PATH: records its arguments and, on `install`, puts an executable at the
// path the test names (or fails the way apt does when told to).
const FAKE_APT_GET = `#!/bin/sh
echo "$* DEBIAN_FRONTEND=$DEBIAN_FRONTEND" >> "$FAKE_APT_LOG"
if [ "$1" = install ]; then
  if [ -n "$FAKE_APT_FAIL" ]; then echo "E: Unable to locate package chromium" >&2; exit 100; fi
  printf '#!/bin/sh\\necho chromium\\n' > "$FAKE_APT_TARGET"
  chmod +x "$FAKE_APT_TARGET"
fi
`;

describe('ensureDebianPrerequisite', () => {
  let dir: string;
  let binDir: string;
  let target: string;
  let aptLog: string;
  let lines: string[];
  const env = (extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv => ({
    PATH: `${binDir}:/usr/bin:/bin`,
    FAKE_APT_LOG: aptLog,
    FAKE_APT_TARGET: target,
    ...extra,
  });
  const browser = (): DebianPrerequisite => ({
    ...chromiumPrerequisite({ CHROMIUM_PATH: '' }),
    path: target,
  });

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'benchfleet-apt-'));
    binDir = join(dir, 'bin');
    target = join(dir, 'usr-bin-chromium');
    aptLog = join(dir, 'apt.log');
    lines = [];
    await mkdir(binDir);
    await writeFile(join(binDir, 'apt-get'), FAKE_APT_GET);
    await chmod(join(binDir, 'apt-get'), 0o755);
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  const aptCalls = async () =>
    existsSync(aptLog) ? (await readFile(aptLog, 'utf8')).trim().split('\n') : [];

  it('leaves a present program alone', async () => {
    await writeFile(target, '#!/bin/sh\n');
    await chmod(target, 0o755);
    await expect(
      ensureDebianPrerequisite(browser(), { env: env(), isRoot: true, log: (l) => lines.push(l) }),
    ).resolves.toBe('present');
    expect(await aptCalls()).toEqual([]);
  });

  it('installs the Debian package with apt-get as root, saying so', async () => {
    const outcome = await ensureDebianPrerequisite(browser(), {
      env: env(),
      isRoot: true,
      log: (l) => lines.push(l),
    });
    expect(outcome).toBe('installed');
    expect(existsSync(target)).toBe(true);
    expect(await aptCalls()).toEqual([
      'update -qq DEBIAN_FRONTEND=noninteractive',
      'install -y -qq chromium DEBIAN_FRONTEND=noninteractive',
    ]);
    expect(lines[0]).toBe(
      `the dashboard's browser tests need ${target}: installing Debian's chromium with apt-get (this takes a minute or two)…`,
    );
    expect(lines.at(-1)).toMatch(/^ {2}chromium installed in \d+ s$/);
  });

  it('fails in one line with apt-get’s reason and the command when the install fails', async () => {
    const error = await ensureDebianPrerequisite(browser(), {
      env: env({ FAKE_APT_FAIL: '1' }),
      isRoot: true,
    }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(MissingPrerequisiteError);
    const message = (error as Error).message;
    expect(message).not.toContain('\n');
    expect(message).toBe(
      `the dashboard's browser tests need ${target}, and \`apt-get install -y -qq chromium\` failed (exit 100: E: Unable to locate package chromium): run \`apt-get update && apt-get install -y chromium\` yourself, then run the tests again`,
    );
    expect((error as Error).stack).toBe(`MissingPrerequisiteError: ${message}`);
  });

  it('does not try to install when it is not root, and names the command', async () => {
    const error = await ensureDebianPrerequisite(browser(), {
      env: env(),
      isRoot: false,
    }).catch((e: unknown) => e);
    expect((error as Error).message).toBe(
      `the dashboard's browser tests need ${target}, which is missing: install Debian's chromium as root (\`sudo apt-get update && sudo apt-get install -y chromium\`), then run the tests again`,
    );
    expect(await aptCalls()).toEqual([]);
  });

  it('says there is no apt-get when PATH has none', async () => {
    const error = await ensureDebianPrerequisite(browser(), {
      env: env({ PATH: join(dir, 'nothing') }),
      isRoot: true,
    }).catch((e: unknown) => e);
    expect((error as Error).message).toMatch(
      /which is missing, and there is no apt-get on PATH to install Debian's chromium: install a chromium there \(or set CHROMIUM_PATH to one\)/,
    );
  });

  it('installs nothing for a CHROMIUM_PATH that points nowhere, and says which variable to fix', async () => {
    const missing = join(dir, 'elsewhere', 'chrome');
    const error = await ensureDebianPrerequisite(chromiumPrerequisite({ CHROMIUM_PATH: missing }), {
      env: env(),
      isRoot: true,
    }).catch((e: unknown) => e);
    expect((error as Error).message).toBe(
      `the dashboard's browser tests need ${missing} (CHROMIUM_PATH), which is not an executable: fix CHROMIUM_PATH, or unset it and install Debian's chromium (\`apt-get update && apt-get install -y chromium\`, as root)`,
    );
    expect(await aptCalls()).toEqual([]);
  });
});
