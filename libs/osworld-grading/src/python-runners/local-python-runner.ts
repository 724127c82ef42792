import { spawn } from 'node:child_process';
import type { PythonRunner } from './python-runner.js';

const MAX_OUTPUT_BYTES = 16 * 1024 * 1024;

/**
 * A `PythonRunner` on this host: `python3 -c SCRIPT` with cwd `dir`, the caller's environment, and a
 * hard kill at the deadline (a test suite that never returns must not hold the worker).
 */
export class LocalPythonRunner implements PythonRunner {
  constructor(private readonly executable = 'python3') {}

  run(
    dir: string,
    script: string,
    options: { timeoutMs: number },
  ): Promise<{ stdout: string; stderr: string; exitCode: number }> {
    return new Promise((resolve, reject) => {
      const child = spawn(this.executable, ['-c', script], {
        cwd: dir,
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      const stdout: Buffer[] = [];
      const stderr: Buffer[] = [];
      let size = 0;
      let failure: Error | undefined;
      const collect = (into: Buffer[]) => (chunk: Buffer) => {
        size += chunk.length;
        if (size > MAX_OUTPUT_BYTES) {
          failure ??= new Error(`python3 wrote more than ${MAX_OUTPUT_BYTES} bytes of output`);
          child.kill('SIGKILL');
          return;
        }
        into.push(chunk);
      };
      child.stdout.on('data', collect(stdout));
      child.stderr.on('data', collect(stderr));
      const timer = setTimeout(() => {
        failure ??= new Error(`python3 did not finish within ${options.timeoutMs} ms`);
        child.kill('SIGKILL');
      }, options.timeoutMs);
      child.on('error', (error) => {
        clearTimeout(timer);
        reject(new Error(`cannot run ${this.executable}: ${error.message}`));
      });
      child.on('close', (code, signal) => {
        clearTimeout(timer);
        if (failure !== undefined) return reject(failure);
        resolve({
          stdout: Buffer.concat(stdout).toString('utf8'),
          stderr: Buffer.concat(stderr).toString('utf8'),
          exitCode: code ?? (signal === null ? 0 : 128),
        });
      });
    });
  }
}
