import type { PythonValue } from './python-value.js';

/**
 * Runs a Python test file beside the files it imports, as `check_python_file_by_test_suite` does.
 * Graded runs use the desktop's python3 (through the VM server); `verify-grading` a local python3.
 */
export interface PythonRunner {
  /** Runs `script` with cwd `dir` (and `dir` first on sys.path); its stdout, stderr and exit code. */
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

export interface MetricContext {
  /** The per-attempt cache directory the getters wrote into (absolute). */
  readonly cacheDir: string;
  readonly python?: PythonRunner;
}

/**
 * One OSWorld metric function, ported. `args` are what the getters returned, positionally (a file
 * getter gives an absolute path in `cacheDir`, a list of them, or null); `options` are the task's
 * keyword arguments unchanged. It returns what the Python function returned, type included, or
 * throws `PythonException` where the Python function raises.
 */
export type MetricFunction = (
  args: readonly unknown[],
  options: Readonly<Record<string, unknown>>,
  context: MetricContext,
) => PythonValue | Promise<PythonValue>;

export interface PortedMetric {
  readonly name: string;
  readonly run: MetricFunction;
  /**
   * 0 for metrics that must match the original exactly; otherwise the largest absolute difference
   * from the original's score we accept, with the reason (a different PDF text extractor…).
   */
  readonly tolerance: { readonly abs: number; readonly why: string } | 0;
}
