import { join } from 'node:path';
import { listFilesUnder } from '../cache-dir/cache-dir.js';
import { GradingInfraError } from '../grading/grading-errors.js';
import type { PythonRunner } from './python-runner.js';
import type { OsworldVmServer } from '../vm-server/osworld-vm-server.js';

/** `/execute` kills its command after 120 s; the script gets less so its own timeout answers first. */
const LONGEST_RUN_SECONDS = 110;
const TIMED_OUT_MARK = '\nbenchfleet: python3 timed out\n';
/**
 * `sh -c RUN_SCRIPT sh DIR SECONDS SCRIPT`. `timeout` exits 124 both when it stopped the script and
 * when the script exits 124 itself; the elapsed time tells them apart.
 */
const RUN_SCRIPT =
  'cd "$1" || exit 126; start=$(date +%s); timeout -k 5 "$2" python3 -c "$3"; status=$?; ' +
  'if [ "$status" -eq 124 ] && [ $(( $(date +%s) - start )) -ge "$2" ]; then ' +
  `printf '${TIMED_OUT_MARK.replaceAll('\n', '\\n')}' >&2; fi; exit $status`;

/**
 * Runs Python in the desktop's python3 (for `check_python_file_by_test_suite`): the local
 * directory's files are uploaded to a fresh temp dir on the desktop and the script runs there (cwd
 * = that dir, so it is first on sys.path); the temp dir is removed afterwards. As the PythonRunner
 * contract asks, it resolves whatever the exit code, and rejects when the script could not run
 * (GradingInfraError: the desktop's fault) or did not finish in time.
 */
export class VmPythonRunner implements PythonRunner {
  constructor(
    private readonly vm: OsworldVmServer,
    private readonly options: { readonly signal?: AbortSignal } = {},
  ) {}

  async run(
    dir: string,
    script: string,
    options: { timeoutMs: number },
  ): Promise<{ stdout: string; stderr: string; exitCode: number }> {
    const call = this.options.signal ? { signal: this.options.signal } : {};
    const made = await this.vm.execute(
      ['mktemp', '-d', '-t', 'benchfleet-python.XXXXXX'],
      false,
      call,
    );
    if (!made.ok || made.returncode !== 0)
      throw new GradingInfraError(
        `cannot make a temp dir on the desktop: ${made.ok ? made.error.trim() : made.message}`,
      );
    const remoteDir = made.output.trim();
    try {
      for (const file of await listFilesUnder(dir)) {
        const answer = await this.vm.upload(`${remoteDir}/${file}`, join(dir, file), call);
        if (answer.status !== 200)
          throw new GradingInfraError(
            `cannot upload ${file} to the desktop: HTTP ${answer.status} ${answer.text.trim()}`,
          );
      }
      const seconds = Math.max(
        1,
        Math.min(LONGEST_RUN_SECONDS, Math.ceil(options.timeoutMs / 1000)),
      );
      const ran = await this.vm.execute(
        ['/bin/sh', '-c', RUN_SCRIPT, 'sh', remoteDir, String(seconds), script],
        false,
        call,
      );
      if (!ran.ok)
        throw new GradingInfraError(`python3 did not run on the desktop: ${ran.message}`);
      if (ran.error.endsWith(TIMED_OUT_MARK))
        throw new Error(`python3 did not finish within ${seconds} s on the desktop`);
      if (
        (ran.returncode === 126 || ran.returncode === 127) &&
        ran.error.startsWith('timeout: failed to run command')
      )
        throw new GradingInfraError(`cannot run python3 on the desktop: ${ran.error.trim()}`);
      return { stdout: ran.output, stderr: ran.error, exitCode: ran.returncode };
    } finally {
      await this.vm.execute(['rm', '-rf', remoteDir], false, call).catch(() => undefined);
    }
  }
}
