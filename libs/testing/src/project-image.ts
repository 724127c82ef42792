import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { ensureDockerEngine } from './docker-engine.js';

const REPO_DIR = fileURLToPath(new URL('../../..', import.meta.url));

export interface DockerResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** The docker CLI, to completion or its deadline (then killed: code null). */
export function docker(
  args: string[],
  options: { timeoutMs?: number; env?: NodeJS.ProcessEnv; command?: string } = {},
): Promise<DockerResult> {
  return new Promise((resolve) => {
    const child = spawn(options.command ?? 'docker', args, {
      cwd: REPO_DIR,
      env: { ...process.env, DOCKER_BUILDKIT: '0', ...options.env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on(
      'data',
      (chunk: Buffer) => (stderr = (stderr + chunk.toString()).slice(-8_000)),
    );
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 120_000);
    child.once('error', (error) => {
      clearTimeout(timer);
      resolve({ code: null, stdout, stderr: `${stderr}${error.message}` });
    });
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/** The docker CLI; its stdout, trimmed, or an error with its last lines. */
export async function dockerOk(
  args: string[],
  options: { timeoutMs?: number; env?: NodeJS.ProcessEnv; command?: string } = {},
): Promise<string> {
  const result = await docker(args, options);
  if (result.code !== 0)
    throw new Error(
      `${options.command ?? 'docker'} ${args.join(' ')}: exit ${result.code}: ${result.stderr.trim().split('\n').slice(-5).join(' | ')}`,
    );
  return result.stdout.trim();
}

/** The project image's tag for this checkout: checkouts side by side never retag each other's. */
const PROJECT_IMAGE = `benchfleet-test:${createHash('sha256').update(REPO_DIR).digest('hex').slice(0, 12)}`;

let built: Promise<string> | undefined;

/**
 * deploy/Dockerfile built from this checkout with the classic builder (what Debian's docker.io
 * has), once per test process and one build at a time per machine; Docker's layer cache makes an
 * unchanged checkout a matter of seconds. Returns the image's tag.
 */
export function buildProjectImage(log: (line: string) => void = () => undefined): Promise<string> {
  built ??= (async () => {
    const engine = await ensureDockerEngine({ log });
    if (!engine.available) throw new Error(`no Docker engine: ${engine.reason}`);
    const started = Date.now();
    await dockerOk(
      [
        '-c',
        'exec flock "${TMPDIR:-/tmp}/benchfleet-project-image.lock" docker build -q -f deploy/Dockerfile -t "$0" .',
        PROJECT_IMAGE,
      ],
      { command: 'bash', timeoutMs: 30 * 60_000 },
    );
    log(`${PROJECT_IMAGE}: built in ${((Date.now() - started) / 1000).toFixed(1)} s`);
    return PROJECT_IMAGE;
  })();
  return built;
}

/** Containers a test started, by name: removed (with their anonymous volumes) when it ends. */
export class TestContainers {
  private readonly names: string[] = [];
  constructor(readonly prefix = `benchfleet-t${process.pid}`) {}

  name(suffix: string): string {
    const name = `${this.prefix}-${suffix}`;
    this.names.push(name);
    return name;
  }

  /** `docker run -d --name <prefix>-<suffix> …`: the container's name. */
  async run(suffix: string, args: string[]): Promise<string> {
    const name = this.name(suffix);
    await dockerOk(['run', '-d', '--name', name, ...args]);
    return name;
  }

  async removeAll(): Promise<void> {
    if (this.names.length) await docker(['rm', '-f', '-v', ...this.names.splice(0)]);
  }
}

/** `docker inspect` of one field (a Go template). */
export function inspect(container: string, template: string): Promise<string> {
  return dockerOk(['inspect', '-f', template, container]);
}
