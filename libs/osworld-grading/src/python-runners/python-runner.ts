/**
 * Runs Python for `check_python_file_by_test_suite`, which upstream runs inside the harness's own
 * interpreter. `verify-grading` and the fixture test use `LocalPythonRunner` (python3 on the worker
 * host); graded runs may use the desktop's python3 through the VM server instead.
 *
 * Contract: run `script` (Python 3 source, self-contained) with a python3 whose working directory
 * holds every file of the host folder `dir` under the same names (a remote runner copies the folder
 * first: the script imports siblings of the test file from its cwd). Resolve with the process's
 * stdout, stderr and exit code whatever the exit code; reject only when the script could not be run
 * or did not finish within `timeoutMs` (the process is then killed).
 */
export interface PythonRunner {
  run(
    dir: string,
    script: string,
    options: { timeoutMs: number },
  ): Promise<{
    stdout: string;
    stderr: string;
    exitCode: number;
  }>;
}
