import { spawn } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';
import { errorMessage, redactSecrets, TransientError } from '@benchfleet/core';
import { GradingInfraError, type OsworldVmServer } from '@benchfleet/osworld-grading';
import type { StackProbe } from './stack-watch.js';

/**
 * How long a reset may take. Recreating deploy/desktop's container from its image takes seconds
 * and its services (Xvfb, XFCE, bytebotd, the VM server) answer 10–40 s later on a busy 2-core
 * machine (bench/README.md); a pod may first wait for a node. Five minutes for the command, three
 * for both servers to answer, probed every half second: each probe round is two small requests,
 * and the task starts as soon as the desktop is up.
 */
export const STACK_RESET_DEFAULTS = {
  commandDeadlineMs: 300_000,
  readyDeadlineMs: 180_000,
  readyIntervalMs: 500,
} as const;

/** Each stream of the reset command keeps its last 4 KiB for the record. */
const OUTPUT_TAIL_BYTES = 4_096;

/** What the reset command did: its exit, its output (tails, secrets redacted) and its duration. */
export interface ResetCommandReport {
  readonly command: string;
  readonly exitCode: number | null;
  readonly signal: string | null;
  readonly stdout: string;
  readonly stderr: string;
  readonly durationMs: number;
}

/** A reset (command and wait) that gave a fresh desktop. */
export interface StackResetReport extends ResetCommandReport {
  /** From the command's end to bytebotd and the VM server both answering. */
  readonly readyMs: number;
}

/** The reset command failed, timed out or could not start: an infra fault of the stack, retried. */
export class StackResetError extends TransientError {
  override readonly name = 'StackResetError';
  constructor(
    readonly report: ResetCommandReport,
    problem: string,
  ) {
    const output = (report.stderr.trim() || report.stdout.trim()).split('\n').slice(-3).join(' | ');
    super(`the stack's reset command ${problem}${output ? `: ${output}` : ''}`);
  }
}

/** After the reset, bytebotd or the VM server did not answer in time: an infra fault, retried. */
export class StackNotReadyError extends TransientError {
  override readonly name = 'StackNotReadyError';
  constructor(
    readonly deadlineMs: number,
    readonly problems: readonly string[],
  ) {
    super(`the stack was not ready ${deadlineMs / 1000} s after its reset: ${problems.join('; ')}`);
  }
}

export interface ResetCommandOptions {
  readonly deadlineMs?: number;
  /** The job's deadline: an abort kills the command and rethrows the signal's reason. */
  readonly signal?: AbortSignal;
}

/**
 * Runs the worker's `--reset-command` with `/bin/sh -c`, in a process group of its own so that a
 * deadline kills everything it started. Exit 0 or StackResetError.
 */
export async function runResetCommand(
  command: string,
  options: ResetCommandOptions = {},
): Promise<ResetCommandReport> {
  const deadlineMs = options.deadlineMs ?? STACK_RESET_DEFAULTS.commandDeadlineMs;
  options.signal?.throwIfAborted();
  const started = Date.now();
  const stdout = new OutputTail();
  const stderr = new OutputTail();
  const child = spawn('/bin/sh', ['-c', command], {
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout.on('data', (chunk: Buffer) => stdout.add(chunk));
  child.stderr.on('data', (chunk: Buffer) => stderr.add(chunk));
  let timedOut = false;
  const killGroup = () => {
    try {
      if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL');
    } catch {
      child.kill('SIGKILL');
    }
  };
  const timer = setTimeout(() => {
    timedOut = true;
    killGroup();
  }, deadlineMs);
  const onAbort = () => killGroup();
  options.signal?.addEventListener('abort', onAbort, { once: true });
  const exit = await new Promise<
    { code: number | null; signal: NodeJS.Signals | null } | { spawnError: unknown }
  >((resolve) => {
    child.once('error', (error) => resolve({ spawnError: error }));
    child.once('close', (code, signal) => resolve({ code, signal }));
  });
  clearTimeout(timer);
  options.signal?.removeEventListener('abort', onAbort);
  options.signal?.throwIfAborted();
  const report: ResetCommandReport = {
    command,
    exitCode: 'code' in exit ? exit.code : null,
    signal: 'signal' in exit ? exit.signal : null,
    stdout: stdout.text(),
    stderr: stderr.text(),
    durationMs: Date.now() - started,
  };
  if ('spawnError' in exit)
    throw new StackResetError(report, `could not start (${errorMessage(exit.spawnError)})`);
  if (timedOut)
    throw new StackResetError(report, `did not finish within ${deadlineMs / 1000} s (killed)`);
  if (report.exitCode !== 0)
    throw new StackResetError(
      report,
      report.exitCode === null
        ? `was killed by ${report.signal ?? 'a signal'}`
        : `exited with code ${report.exitCode}`,
    );
  return report;
}

/** The least time a readiness probe gets, however close the deadline. */
const MIN_PROBE_MS = 1_000;

export interface StackReadinessOptions {
  /** Named probes, each null when its part answers (bytebotd, the VM server). */
  readonly probes: Readonly<Record<string, StackProbe>>;
  readonly deadlineMs?: number;
  readonly intervalMs?: number;
  readonly signal?: AbortSignal;
}

/**
 * Probes every part until all answer in the same round; StackNotReadyError, naming each part
 * still failing and why, when the deadline passes first. Returns how long it waited.
 */
export async function waitForStackReady(options: StackReadinessOptions): Promise<number> {
  const deadlineMs = options.deadlineMs ?? STACK_RESET_DEFAULTS.readyDeadlineMs;
  const intervalMs = options.intervalMs ?? STACK_RESET_DEFAULTS.readyIntervalMs;
  const started = Date.now();
  for (;;) {
    options.signal?.throwIfAborted();
    // A round near the deadline still gives each probe a fair time: a part that answers is not
    // called down because the round began a few milliseconds before the end.
    const roundMs = Math.max(MIN_PROBE_MS, deadlineMs - (Date.now() - started));
    const roundDeadline = AbortSignal.timeout(roundMs);
    const round = AbortSignal.any([roundDeadline, ...(options.signal ? [options.signal] : [])]);
    const problems = (
      await Promise.all(
        Object.entries(options.probes).map(async ([part, probe]) => {
          const problem = await probe(round).catch((error: unknown) =>
            roundDeadline.aborted && !options.signal?.aborted
              ? `no answer within ${roundMs / 1000} s`
              : errorMessage(error),
          );
          return problem === null ? null : `${part}: ${problem}`;
        }),
      )
    ).filter((problem): problem is string => problem !== null);
    options.signal?.throwIfAborted();
    if (problems.length === 0) return Date.now() - started;
    if (Date.now() - started + intervalMs >= deadlineMs)
      throw new StackNotReadyError(deadlineMs, problems);
    await sleep(intervalMs, undefined, options.signal ? { signal: options.signal } : {});
  }
}

/** The VM server answers `GET /platform` (one try, the client's deadline): null, or why not. */
export function vmServerProbe(vm: OsworldVmServer): StackProbe {
  return async (signal) => {
    try {
      await vm.platform({ signal });
      return null;
    } catch (error) {
      if (error instanceof GradingInfraError) return error.message;
      throw error;
    }
  };
}

/** The last bytes of a stream, as text with secrets redacted. */
class OutputTail {
  private chunks: Buffer[] = [];
  private size = 0;

  add(chunk: Buffer): void {
    this.chunks.push(chunk);
    this.size += chunk.length;
    while (this.size - (this.chunks[0]?.length ?? 0) >= OUTPUT_TAIL_BYTES) {
      this.size -= this.chunks.shift()?.length ?? 0;
    }
  }

  text(): string {
    const all = Buffer.concat(this.chunks);
    return redactSecrets(
      all.subarray(Math.max(0, all.length - OUTPUT_TAIL_BYTES)).toString('utf8'),
    );
  }
}
