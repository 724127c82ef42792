import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';
import { ensureDockerEngine } from '../docker-engine.js';

// A real graded-OSWorld desktop for tests: the images of deploy/desktop built (or reused when their
// inputs have not changed) by deploy/desktop/build-desktop-images.mjs, one container started from
// it with its ports on fixed loopback ports (a reset recreates it with the same bindings, so the
// URLs stay valid), and the `--reset-command` that recreates it as a stack's worker does.

const ROOT = fileURLToPath(new URL('../../../../', import.meta.url));
const BUILD_SCRIPT = `${ROOT}deploy/desktop/build-desktop-images.mjs`;
const RESET_SCRIPT = `${ROOT}deploy/desktop-reset.mjs`;
/** A first build downloads and installs a desktop's worth of packages: allow for a slow mirror. */
const BUILD_TIMEOUT_MS = 90 * 60_000;
const READY_TIMEOUT_MS = 180_000;
const COMMAND_TIMEOUT_MS = 120_000;

/** What the image's org.benchfleet.desktop label says it has (deploy/desktop/README.md). */
interface DesktopLabel {
  readonly schema: number;
  readonly base: {
    readonly image: string;
    readonly route: 'local' | 'registry';
    readonly os: string;
  };
  readonly screen: string | null;
  /** App → version, null when absent. */
  readonly apps: Readonly<Record<string, string | null>>;
  readonly commands: Readonly<Record<string, string | null>>;
  readonly substitutions: readonly {
    readonly for: string;
    readonly by: string;
    readonly why: string;
  }[];
}

export interface RealDesktop {
  readonly image: string;
  readonly label: DesktopLabel;
  readonly container: string;
  /** bytebotd (`--desktop-url`). */
  readonly bytebotdUrl: string;
  /** OSWorld's VM server (`--desktop-server-url`). */
  readonly vmServerUrl: string;
  /** Port 9222 of the desktop: Chrome's DevTools once a task has launched it and socat. */
  readonly devtoolsUrl: string;
  /** The worker's `--reset-command`: recreates this container from its image. */
  readonly resetCommand: string;
  /** The `docker run` arguments that started it (a plain `docker run` to compare a reset with). */
  readonly runArgs: readonly string[];
  /** Runs a shell command in the desktop as its user, on its display (`docker exec`). */
  exec(command: string): Promise<{ code: number | null; stdout: string; stderr: string }>;
  /**
   * Whether a shell test holds on the desktop, asked of its VM server (`/setup/execute`, as its
   * user on its display): a scripted agent's eyes, polled often, at a fraction of a `docker exec`'s
   * cost on a busy machine. False while the desktop does not answer.
   */
  holds(test: string): Promise<boolean>;
  /** Waits until bytebotd answers a screenshot and the VM server answers; the milliseconds it took. */
  waitUntilReady(): Promise<number>;
  /** The container's log (supervisord and every program), for a failing test to show. */
  logs(): Promise<string>;
  close(): Promise<void>;
}

export type RealDesktopStart =
  | { readonly available: true; readonly desktop: RealDesktop }
  | { readonly available: false; readonly reason: string };

export interface RealDesktopOptions {
  /** Names the container (`benchfleet-desktop-<name>-<checkout>`): one per test file. */
  readonly name: string;
  readonly log?: (line: string) => void;
  /**
   * The desktop image, when the caller has built it (buildDesktopImages) for several desktops to
   * start at once; else it is built (or reused) here.
   */
  readonly image?: string;
}

interface Ran {
  code: number | null;
  stdout: string;
  stderr: string;
}

function run(
  command: string,
  args: readonly string[],
  timeoutMs: number,
  onStderrLine?: (line: string) => void,
): Promise<Ran> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => {
      const text = chunk.toString();
      stderr = (stderr + text).slice(-100_000);
      for (const line of text.split('\n')) if (line.trim()) onStderrLine?.(line.trim());
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.once('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

async function docker(args: readonly string[], timeoutMs = COMMAND_TIMEOUT_MS): Promise<string> {
  const ran = await run('docker', args, timeoutMs);
  if (ran.code !== 0)
    throw new Error(
      `docker ${args.slice(0, 2).join(' ')} failed (${ran.code}): ${ran.stderr.trim()}`,
    );
  return ran.stdout;
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** The desktop images, built or reused (their inputs' digest): the desktop image's name. */
export async function buildDesktopImages(log: (line: string) => void): Promise<string> {
  const built = await run(process.execPath, [BUILD_SCRIPT, '--json'], BUILD_TIMEOUT_MS, log);
  if (built.code !== 0)
    throw new Error(
      `the desktop images could not be built: ${built.stderr.trim().split('\n').at(-1) ?? ''}`,
    );
  const summary = JSON.parse(built.stdout.trim().split('\n').at(-1) ?? '{}') as {
    image: string;
    built: { image: string; seconds: number }[];
  };
  for (const image of summary.built) log(`built ${image.image} in ${image.seconds} s`);
  return summary.image;
}

/** bytebotd answers a screenshot and the VM server its platform: null, or what is not up yet. */
async function readinessProblem(bytebotdUrl: string, vmServerUrl: string): Promise<string | null> {
  const signal = AbortSignal.timeout(10_000);
  try {
    const shot = await fetch(`${bytebotdUrl}/computer-use`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ action: 'screenshot' }),
      signal,
    });
    const body = (await shot.json()) as { image?: unknown };
    if (typeof body.image !== 'string') return `bytebotd answered ${shot.status} without an image`;
    const platform = await fetch(`${vmServerUrl}/platform`, { signal });
    if (!platform.ok) return `the VM server answered ${platform.status}`;
    return null;
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  }
}

async function shellTestHolds(vmServerUrl: string, test: string): Promise<boolean> {
  try {
    const response = await fetch(`${vmServerUrl}/setup/execute`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ command: test, shell: true }),
      signal: AbortSignal.timeout(30_000),
    });
    if (!response.ok) return false;
    return ((await response.json()) as { returncode?: unknown }).returncode === 0;
  } catch {
    return false;
  }
}

/**
 * Builds the images (cached) and starts one desktop. Where no Docker engine can be had (not root,
 * no apt-get) the answer says why in one line, for the test to skip with.
 */
export async function startRealDesktop(options: RealDesktopOptions): Promise<RealDesktopStart> {
  const log = options.log ?? ((line: string) => process.stderr.write(`${line}\n`));
  const engine = await ensureDockerEngine({ log });
  if (!engine.available) return engine;
  const image = options.image ?? (await buildDesktopImages(log));
  const labels = JSON.parse(
    await docker(['image', 'inspect', '--format', '{{json .Config.Labels}}', image]),
  ) as Record<string, string>;
  const label = JSON.parse(labels['org.benchfleet.desktop'] ?? 'null') as DesktopLabel | null;
  if (!label) throw new Error(`${image} has no org.benchfleet.desktop label`);

  const checkout = createHash('sha256').update(ROOT).digest('hex').slice(0, 8);
  const container = `benchfleet-desktop-${options.name}-${checkout}`;
  await run('docker', ['rm', '-f', container], COMMAND_TIMEOUT_MS);
  const [bytebotdPort, vmPort, devtoolsPort] = [
    await freePort(),
    await freePort(),
    await freePort(),
  ];
  const runArgs = [
    'run',
    '--detach',
    '--name',
    container,
    // Chromium's sandbox needs user namespaces, which Docker's default seccomp profile refuses.
    // Compose runs the desktop privileged as upstream does; this machine refuses privileged
    // containers (their capabilities cannot be applied), and this is the part Chromium needs.
    '--security-opt',
    'seccomp=unconfined',
    '--hostname',
    'computer',
    '--shm-size',
    '2g',
    '--label',
    `org.benchfleet.test=${options.name}`,
    '--publish',
    `127.0.0.1:${bytebotdPort}:9990`,
    '--publish',
    `127.0.0.1:${vmPort}:5000`,
    '--publish',
    `127.0.0.1:${devtoolsPort}:9222`,
    image,
  ];
  await docker(runArgs);
  const bytebotdUrl = `http://127.0.0.1:${bytebotdPort}`;
  const vmServerUrl = `http://127.0.0.1:${vmPort}`;
  const desktop: RealDesktop = {
    image,
    label,
    container,
    bytebotdUrl,
    vmServerUrl,
    devtoolsUrl: `http://127.0.0.1:${devtoolsPort}`,
    resetCommand: `${process.execPath} ${RESET_SCRIPT} docker ${container}`,
    runArgs,
    exec: (command) =>
      run(
        'docker',
        ['exec', '--user', 'user', '--env', 'DISPLAY=:0', container, 'bash', '-c', command],
        COMMAND_TIMEOUT_MS,
      ),
    holds: (test) => shellTestHolds(vmServerUrl, test),
    async waitUntilReady() {
      const started = Date.now();
      let problem: string | null = 'not probed';
      while (Date.now() - started < READY_TIMEOUT_MS) {
        problem = await readinessProblem(bytebotdUrl, vmServerUrl);
        if (problem === null) return Date.now() - started;
        await new Promise((resolve) => setTimeout(resolve, 250));
      }
      throw new Error(`${container} not ready after ${READY_TIMEOUT_MS / 1000} s: ${problem}`);
    },
    logs: async () => (await run('docker', ['logs', '--tail', '300', container], 30_000)).stdout,
    async close() {
      await run('docker', ['rm', '-f', container], COMMAND_TIMEOUT_MS);
    },
  };
  try {
    log(`${container} ready in ${await desktop.waitUntilReady()} ms`);
  } catch (error) {
    const logs = await desktop.logs();
    await desktop.close();
    throw new Error(`${error instanceof Error ? error.message : String(error)}\n${logs}`);
  }
  return { available: true, desktop };
}
