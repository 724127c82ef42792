import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const SCRIPTS = fileURLToPath(new URL('../../../deploy/base-images/', import.meta.url));

/** Whether the tests that build and run images can run here, and if not, the one line why. */
export type DockerEngine = { available: true } | { available: false; reason: string };

interface ScriptResult {
  code: number | null;
  stderr: string;
}

function runScript(
  name: string,
  args: string[],
  log: (line: string) => void,
  timeoutMs: number,
): Promise<ScriptResult> {
  return new Promise((resolve) => {
    const child = spawn('bash', [SCRIPTS + name, ...args], { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => {
      const text = chunk.toString();
      stderr = (stderr + text).slice(-4_000);
      for (const line of text.split('\n')) if (line.trim()) log(line.trim());
    });
    const timer = setTimeout(() => child.kill('SIGTERM'), timeoutMs);
    child.once('error', (error) => {
      clearTimeout(timer);
      resolve({ code: null, stderr: error.message });
    });
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stderr });
    });
  });
}

function lastLine(text: string): string {
  return (
    text
      .split('\n')
      .map((line) => line.trim())
      .filter(Boolean)
      .at(-1) ?? 'no output'
  );
}

let engine: Promise<DockerEngine> | undefined;

/**
 * A Docker engine that answers, with the local base images the Dockerfiles name
 * (deploy/base-images/): as root, Debian's docker.io is installed and dockerd started when needed,
 * as the tests install Chromium. Where none can be had (not root, no apt-get) the answer says why,
 * in one line, for the test to skip with; a failed install or start is an error, never a skip.
 */
export function ensureDockerEngine(
  options: { log?: (line: string) => void } = {},
): Promise<DockerEngine> {
  const log = options.log ?? ((line: string) => process.stderr.write(`${line}\n`));
  engine ??= (async (): Promise<DockerEngine> => {
    const started = await runScript('ensure-docker-engine.sh', [], log, 10 * 60_000);
    if (started.code === 3) return { available: false, reason: lastLine(started.stderr) };
    if (started.code !== 0)
      throw new Error(`no Docker engine: ${lastLine(started.stderr)} (exit ${started.code})`);
    const bases = await runScript('build-local-bases.sh', [], log, 20 * 60_000);
    if (bases.code !== 0)
      throw new Error(`the base images could not be had: ${lastLine(bases.stderr)}`);
    return { available: true };
  })();
  return engine;
}

/**
 * Images deploy/compose.yaml names beyond the bases (`postgres`, `redis`): pulled, or made from
 * Debian's packages by build-local-bases.sh where no registry answers. Needs `ensureDockerEngine()`.
 */
export async function ensureLocalImages(
  names: Array<'postgres' | 'redis'>,
  options: { log?: (line: string) => void } = {},
): Promise<void> {
  const log = options.log ?? ((line: string) => process.stderr.write(`${line}\n`));
  const made = await runScript('build-local-bases.sh', names, log, 20 * 60_000);
  if (made.code !== 0)
    throw new Error(`${names.join(' and ')} could not be had: ${lastLine(made.stderr)}`);
}
