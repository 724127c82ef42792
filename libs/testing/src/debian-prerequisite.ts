import { spawn } from 'node:child_process';
import { accessSync, constants, existsSync } from 'node:fs';
import { delimiter, join } from 'node:path';

/** A program the suite needs at a fixed path, and the Debian package that installs it there. */
export interface DebianPrerequisite {
  /** Where the tests run it from. */
  path: string;
  debianPackage: string;
  /** Who needs it, for the messages: "the dashboard's browser tests". */
  neededBy: string;
  /** The variable that points the tests at another copy. */
  overrideVariable: string;
  /** The path came from that variable: nothing is installed then. */
  overridden: boolean;
}

export interface EnsureOptions {
  env?: NodeJS.ProcessEnv;
  /** Only root may install (default: this process's uid is 0). */
  isRoot?: boolean;
  log?: (line: string) => void;
  /** Deadline of each apt-get command (apt has its own network timeouts; this bounds the rest). */
  commandTimeoutMs?: number;
}

/** One line that names the missing piece and the command that provides it. */
export class MissingPrerequisiteError extends Error {
  override readonly name = 'MissingPrerequisiteError';
  constructor(message: string) {
    super(message);
    // The line is the whole story: a stack trace would only bury it.
    this.stack = `${this.name}: ${message}`;
  }
}

/** Debian's Chromium, which playwright-core drives (never a browser a tool downloads). */
export function chromiumPrerequisite(env: NodeJS.ProcessEnv = process.env): DebianPrerequisite {
  return {
    path: env.CHROMIUM_PATH || '/usr/bin/chromium',
    debianPackage: 'chromium',
    neededBy: "the dashboard's browser tests",
    overrideVariable: 'CHROMIUM_PATH',
    overridden: Boolean(env.CHROMIUM_PATH),
  };
}

function isExecutable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

function onPath(binary: string, env: NodeJS.ProcessEnv): string | undefined {
  for (const dir of (env.PATH ?? '').split(delimiter)) {
    if (dir && existsSync(join(dir, binary))) return join(dir, binary);
  }
  return undefined;
}

/** Runs one apt-get command; resolves with its exit code and the tail of what it printed. */
function aptGet(
  aptPath: string,
  args: string[],
  env: NodeJS.ProcessEnv,
  timeoutMs: number,
): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(aptPath, args, {
      env: { ...env, DEBIAN_FRONTEND: 'noninteractive' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    const keep = (chunk: Buffer) => (output = (output + chunk.toString()).slice(-4_000));
    child.stdout.on('data', keep);
    child.stderr.on('data', keep);
    const timer = setTimeout(() => child.kill('SIGTERM'), timeoutMs);
    child.once('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, output });
    });
  });
}

function lastLine(text: string): string {
  const lines = text
    .split('\n')
    .map((line) => line.trim())
    .filter(Boolean);
  return lines.at(-1) ?? 'no output';
}

/**
 * Makes sure `prerequisite.path` is an executable: installs its Debian package with apt-get when
 * this process is root and apt-get is on PATH; otherwise throws one line naming what is missing and
 * the command that provides it.
 */
export async function ensureDebianPrerequisite(
  prerequisite: DebianPrerequisite,
  options: EnsureOptions = {},
): Promise<'present' | 'installed'> {
  const env = options.env ?? process.env;
  const log = options.log ?? (() => undefined);
  const isRoot = options.isRoot ?? process.getuid?.() === 0;
  const timeoutMs = options.commandTimeoutMs ?? 15 * 60_000;
  const { path, debianPackage, neededBy, overrideVariable, overridden } = prerequisite;
  if (isExecutable(path)) return 'present';

  const install = `apt-get update && apt-get install -y ${debianPackage}`;
  if (overridden)
    throw new MissingPrerequisiteError(
      `${neededBy} need ${path} (${overrideVariable}), which is not an executable: fix ${overrideVariable}, or unset it and install Debian's ${debianPackage} (\`${install}\`, as root)`,
    );
  if (!isRoot)
    throw new MissingPrerequisiteError(
      `${neededBy} need ${path}, which is missing: install Debian's ${debianPackage} as root (\`sudo apt-get update && sudo apt-get install -y ${debianPackage}\`), then run the tests again`,
    );
  const aptPath = onPath('apt-get', env);
  if (!aptPath)
    throw new MissingPrerequisiteError(
      `${neededBy} need ${path}, which is missing, and there is no apt-get on PATH to install Debian's ${debianPackage}: install a ${debianPackage} there (or set ${overrideVariable} to one), then run the tests again`,
    );

  const started = Date.now();
  log(
    `${neededBy} need ${path}: installing Debian's ${debianPackage} with apt-get (this takes a minute or two)…`,
  );
  for (const args of [
    ['update', '-qq'],
    ['install', '-y', '-qq', debianPackage],
  ]) {
    log(`  apt-get ${args.join(' ')}`);
    const result = await aptGet(aptPath, args, env, timeoutMs).catch((error: unknown) => ({
      code: null,
      output: error instanceof Error ? error.message : String(error),
    }));
    if (result.code !== 0)
      throw new MissingPrerequisiteError(
        `${neededBy} need ${path}, and \`apt-get ${args.join(' ')}\` failed (${result.code === null ? 'stopped' : `exit ${result.code}`}: ${lastLine(result.output)}): run \`${install}\` yourself, then run the tests again`,
      );
  }
  if (!isExecutable(path))
    throw new MissingPrerequisiteError(
      `${neededBy} need ${path}, which Debian's ${debianPackage} did not install: install a ${debianPackage} there (or set ${overrideVariable} to one), then run the tests again`,
    );
  log(`  ${debianPackage} installed in ${Math.round((Date.now() - started) / 1000)} s`);
  return 'installed';
}
