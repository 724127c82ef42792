import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { TransientError } from '@benchfleet/core';
import { OsworldVmServerClient } from '@benchfleet/osworld-grading';
import { startFakeOsworldVm } from '@benchfleet/testing';
import {
  runResetCommand,
  StackNotReadyError,
  StackResetError,
  vmServerProbe,
  waitForStackReady,
} from './stack-reset.js';

/** Whether a process is gone (or a zombie nobody reaped yet). */
function isDead(pid: number): boolean {
  try {
    return readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.startsWith('Z') ?? true;
  } catch {
    return true;
  }
}

describe('runResetCommand', () => {
  it('runs the command with /bin/sh and reports its exit and output', async () => {
    const report = await runResetCommand('echo recreated; echo warming >&2');
    expect(report).toMatchObject({
      command: 'echo recreated; echo warming >&2',
      exitCode: 0,
      signal: null,
      stdout: 'recreated\n',
      stderr: 'warming\n',
    });
    expect(report.durationMs).toBeGreaterThanOrEqual(0);
  });

  it('a non-zero exit is a StackResetError (transient: the attempt is retried) with the exit code and the last output', async () => {
    const error = await runResetCommand(
      'echo "Error response from daemon: No such container: desktop-9" >&2; exit 3',
    ).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(StackResetError);
    expect(error).toBeInstanceOf(TransientError);
    expect((error as StackResetError).report.exitCode).toBe(3);
    expect((error as Error).message).toBe(
      "the stack's reset command exited with code 3: Error response from daemon: No such container: desktop-9",
    );
  });

  it('past its deadline the command and everything it started are killed', async () => {
    const error = (await runResetCommand('sleep 30 & echo $!; wait', { deadlineMs: 300 }).catch(
      (caught: unknown) => caught,
    )) as StackResetError;
    expect(error).toBeInstanceOf(StackResetError);
    const background = Number(error.report.stdout.trim());
    expect(background).toBeGreaterThan(0);
    expect(error.message).toBe(
      `the stack's reset command did not finish within 0.3 s (killed): ${background}`,
    );
    await expect.poll(() => isDead(background)).toBe(true);
  });

  it('the job’s abort kills the command and rethrows the abort’s reason', async () => {
    const controller = new AbortController();
    const running = runResetCommand('sleep 30', { signal: controller.signal });
    controller.abort(new Error('job deadline'));
    await expect(running).rejects.toThrow('job deadline');
  });

  it('keeps the last 4 KiB of output, with secrets redacted', async () => {
    const report = await runResetCommand(
      "head -c 10000 /dev/zero | tr '\\0' x; echo; echo postgres://bench:hunter2@db:5432/x",
    );
    expect(report.stdout.length).toBeLessThanOrEqual(4096);
    expect(report.stdout.endsWith('postgres://bench:***@db:5432/x\n')).toBe(true);
    expect(report.stdout).not.toContain('hunter2');
  });
});

describe('waitForStackReady', () => {
  it('returns once every part answers in the same round', async () => {
    let desktopCalls = 0;
    const waited = await waitForStackReady({
      probes: {
        bytebotd: async () => (++desktopCalls < 3 ? 'ECONNREFUSED' : null),
        'VM server': async () => null,
      },
      deadlineMs: 10_000,
      intervalMs: 1,
    });
    expect(desktopCalls).toBe(3);
    expect(waited).toBeGreaterThanOrEqual(0);
  });

  it('past its deadline: StackNotReadyError naming each part still failing and why', async () => {
    const error = await waitForStackReady({
      probes: {
        bytebotd: async () => null,
        'VM server': async () => 'GET /platform got no answer: ECONNREFUSED',
      },
      deadlineMs: 50,
      intervalMs: 10,
    }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(StackNotReadyError);
    expect(error).toBeInstanceOf(TransientError);
    expect((error as Error).message).toBe(
      'the stack was not ready 0.05 s after its reset: VM server: GET /platform got no answer: ECONNREFUSED',
    );
  });

  it('the VM server probe: null while it answers, its unreachable error once it is gone', async () => {
    const vm = await startFakeOsworldVm();
    try {
      const probe = vmServerProbe(new OsworldVmServerClient({ baseUrl: vm.url }));
      expect(await probe(AbortSignal.timeout(5_000))).toBeNull();
      await vm.kill();
      expect(await probe(AbortSignal.timeout(5_000))).toMatch(
        /^OSWorld VM server: GET \/platform got no answer \(1 attempt\(s\)\): ECONNREFUSED/,
      );
    } finally {
      await vm.close();
    }
  });
});
