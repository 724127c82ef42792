// `check_python_file_by_test_suite(actual_files, test_file, **options)` (metrics/vscode.py).
import { randomBytes } from 'node:crypto';
import { realpath, stat } from 'node:fs/promises';
import { basename, dirname, resolve } from 'node:path';
import { bindPythonCall } from '../python/call-binding.js';
import { PythonException } from '../python/exceptions.js';
import { pyOsPath } from '../python/os.js';
import { pyFloat, pyTruthy, type PythonValue, type PyValue } from '../python/values.js';
import type { MetricContext, PortedMetric } from './metric-function.js';

/** Upstream has no deadline (a hanging test hangs the harness); ours matches the VM server's /execute. */
const TEST_SUITE_TIMEOUT_MS = 120_000;

/**
 * The Python side, run in a fresh interpreter whose cwd is the test file's folder. It does what the
 * upstream function does in-process: import the test file under a unique module name with its
 * folder first on sys.path, call the test function, and map its return value (bool → 1/0, number →
 * clamped to [0, 1], anything else → truthiness; any Exception → 0.0). BaseExceptions that are not
 * Exceptions (SystemExit…) escape upstream and are reported here by class and message.
 */
function driverScript(testFileName: string, functionName: unknown, nonce: string): string {
  const pythonLiteral = (value: unknown): string =>
    `json.loads(${JSON.stringify(JSON.stringify(value))})`;
  return `
import importlib.util, json, os, sys, uuid
_verdict_fd = os.dup(1)
def _report(verdict):
    os.write(_verdict_fd, ("\\n${nonce}" + json.dumps(verdict) + "\\n").encode())
def _grade():
    test_dir = os.getcwd()
    test_path = os.path.join(test_dir, ${pythonLiteral(testFileName)})
    name = "dynamic_test_module_" + uuid.uuid4().hex[:8]
    if test_dir not in sys.path:
        sys.path.insert(0, test_dir)
    try:
        spec = importlib.util.spec_from_file_location(name, test_path)
        if spec is None or spec.loader is None:
            return 0.0
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    except Exception:
        return 0.0
    function_name = ${pythonLiteral(functionName)}
    try:
        if not hasattr(module, function_name):
            return 0.0
        test = getattr(module, function_name)
        if not callable(test):
            return 0.0
    except Exception:
        return 0.0
    try:
        result = test()
        if isinstance(result, bool):
            return 1.0 if result else 0.0
        if isinstance(result, (int, float)):
            return max(0.0, min(1.0, float(result)))
        return 1.0 if bool(result) else 0.0
    except Exception:
        return 0.0
try:
    _score = _grade()
except BaseException as error:
    _report({"raises": type(error).__name__, "message": str(error)})
else:
    _report({"score": _score})
`;
}

type Verdict = { score: number } | { raises: string; message: string };

function parseVerdict(stdout: string, nonce: string): Verdict | undefined {
  const line = stdout
    .split('\n')
    .reverse()
    .find((candidate) => candidate.startsWith(nonce));
  if (line === undefined) return undefined;
  const parsed = JSON.parse(line.slice(nonce.length)) as Verdict;
  return parsed;
}

async function checkPythonFileByTestSuite(
  testFile: PyValue,
  functionName: unknown,
  context: MetricContext,
): Promise<PythonValue> {
  if (!pyTruthy(testFile)) return pyFloat(0.0);
  const path = resolve(pyOsPath(testFile));
  // Upstream resolves the path and checks it on the host, before importing anything.
  const found = await stat(path).catch(() => undefined);
  if (found === undefined || !found.isFile()) return pyFloat(0.0);
  const python = context.python;
  if (python === undefined) {
    throw new Error('check_python_file_by_test_suite needs a PythonRunner in its MetricContext');
  }
  const real = await realpath(path);
  const nonce = `benchfleet-verdict-${randomBytes(12).toString('hex')}:`;
  const run = await python.run(dirname(real), driverScript(basename(real), functionName, nonce), {
    timeoutMs: TEST_SUITE_TIMEOUT_MS,
  });
  const verdict = parseVerdict(run.stdout, nonce);
  if (verdict === undefined) {
    // The interpreter died without a verdict (os._exit, a crash): upstream would have lost the harness.
    throw new Error(
      `check_python_file_by_test_suite: python3 exited ${run.exitCode} without a verdict: ${run.stderr.slice(-500)}`,
    );
  }
  if ('raises' in verdict) throw new PythonException(verdict.raises, verdict.message);
  return pyFloat(verdict.score);
}

export const checkPythonFileByTestSuiteMetric: PortedMetric = {
  name: 'check_python_file_by_test_suite',
  tolerance: 0,
  run: async (args, options, context) => {
    const [, testFile] = bindPythonCall(
      {
        name: 'check_python_file_by_test_suite',
        parameters: ['actual_files', 'test_file'],
        varKeywords: true,
      },
      args,
      options,
    ).values;
    // actual_files is ignored upstream: the agent's files matter only as importable siblings. The
    // function name reaches the Python driver as JSON, so it is passed on as the task wrote it.
    const functionName = 'test_function_name' in options ? options['test_function_name'] : 'test';
    return checkPythonFileByTestSuite(testFile ?? null, functionName, context);
  },
};
