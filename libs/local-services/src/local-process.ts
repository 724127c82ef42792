import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, openSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';

const running = new Set<ChildProcess>();
let exitHookInstalled = false;

/**
 * Servers this process started stop when it exits, however it exits, without changing its exit
 * code (a library that calls `process.exit` from an exit hook would turn a failing test run green).
 */
function stopOnExit(child: ChildProcess, signal: NodeJS.Signals): void {
  running.add(child);
  child.once('exit', () => running.delete(child));
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.on('exit', () => {
    for (const server of running) server.kill(signal);
  });
}

/** A free TCP port on 127.0.0.1 at the time of asking (a server may still lose a race for it). */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() =>
        typeof address === 'object' && address
          ? resolve(address.port)
          : reject(new Error('no free port')),
      );
    });
  });
}

/**
 * How to start `command` inside the network namespace `netns` (one `ip netns add` made), as `user`
 * when given: nsenter joins the namespace as root, drops to the user, then runs the server itself
 * (same pid, so signals reach it).
 */
export function launchInNetworkNamespace(
  netns: string,
  command: string,
  args: string[],
  user?: { uid: number; gid: number },
): { command: string; args: string[] } {
  return {
    command: 'nsenter',
    args: [
      `--net=/var/run/netns/${netns}`,
      ...(user ? ['--setuid', String(user.uid), '--setgid', String(user.gid)] : []),
      '--',
      command,
      ...args,
    ],
  };
}

export interface ServerProcess {
  child: ChildProcess;
  /** Resolves when the process has exited. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** The last lines the server wrote to its log file. */
  logTail(lines?: number): string;
}

/**
 * Starts a server whose output goes to `logFile` (a server must not depend on our pipes: it may
 * outlive a crashed parent by a moment). Errors of the spawn itself (EACCES, ENOENT) reject
 * instead of becoming an unhandled 'error' event.
 */
export async function startServerProcess(options: {
  command: string;
  args: string[];
  logFile: string;
  stopSignal: NodeJS.Signals;
  uid?: number;
  gid?: number;
  env?: NodeJS.ProcessEnv;
}): Promise<ServerProcess> {
  const log = openSync(options.logFile, 'a');
  let child: ChildProcess;
  try {
    child = spawn(options.command, options.args, {
      stdio: ['ignore', log, log],
      env: options.env ?? process.env,
      ...(options.uid !== undefined ? { uid: options.uid } : {}),
      ...(options.gid !== undefined ? { gid: options.gid } : {}),
    });
  } finally {
    closeSync(log);
  }
  await new Promise<void>((resolve, reject) => {
    child.once('spawn', resolve);
    child.once('error', reject);
  });
  child.on('error', () => undefined);
  stopOnExit(child, options.stopSignal);
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  return {
    child,
    exited,
    logTail: (lines = 5) => {
      try {
        return readFileSync(options.logFile, 'utf8').trim().split('\n').slice(-lines).join(' | ');
      } catch {
        return '';
      }
    },
  };
}

/** Polls `probe` until it resolves, the process exits, or the time is up. */
export async function waitUntilServing(
  server: ServerProcess,
  what: string,
  probe: () => Promise<void>,
  timeoutMs: number,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let exited = false;
  void server.exited.then(() => (exited = true));
  for (;;) {
    try {
      await probe();
      return;
    } catch (error) {
      if (exited)
        throw new Error(`${what} exited while starting: ${server.logTail() || String(error)}`);
      if (Date.now() > deadline)
        throw new Error(
          `${what} did not accept connections within ${timeoutMs / 1000} s: ${server.logTail() || String(error)}`,
        );
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

export async function stopServerProcess(
  server: ServerProcess,
  signal: NodeJS.Signals,
  timeoutMs = 30_000,
): Promise<void> {
  if (server.child.exitCode !== null || server.child.signalCode !== null) return;
  server.child.kill(signal);
  const timer = setTimeout(() => server.child.kill('SIGKILL'), timeoutMs);
  await server.exited;
  clearTimeout(timer);
}
