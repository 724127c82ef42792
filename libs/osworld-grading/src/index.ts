// The public face of OSWorld grading: what the worker, the scheduler (regrade, verify-grading) and
// the test kit use. Everything else (Python semantics, metric ports, getters) stays inside.

// Grading a task on a desktop: classify → set up → (agent) → grade; regrade from the saved end state.
export {
  prepareTask,
  validateGradedTasks,
  checkTaskForGrading,
  describeFidelity,
  type GradingCheck,
  type OsworldTaskSpec,
  type PreparedTask,
  type PrepareOptions,
  type TaskFidelity,
} from './tasks/task-preparation.js';
export { PHASE1_TASK_IDS, PHASE1_DOMAINS, type Phase1Domain } from './tasks/phase1-tasks.js';
export { DESKTOP_SUBSTITUTIONS, type DesktopSubstitution } from './setup/desktop-substitutions.js';
export {
  setUpTask,
  gradeTask,
  regradeTask,
  OSWORLD_GRADING_VERSION,
  type GradingDesktop,
  type SetupOutcome,
  type GradeOutcome,
  type GradeDetails,
  type GradeOptions,
  type RegradeOptions,
  type EndStateFile,
  type NoScoreCause,
} from './grading/task-grading.js';
export type { EvaluateEvent, GetterSlot } from './evaluate/osworld-evaluate.js';
export type { PythonValue } from './python/values.js';
export type { DownloadRecord, SetupStepReport, ScreenSize } from './setup/setup-runner.js';
export {
  finalSignalOf,
  FINAL_SIGNAL_MAPPING,
  type FinalSignal,
  type OsworldFinalAction,
} from './evaluate/final-signal.js';

// The desktop side: the VM server, downloads, Python on the desktop, and the infra faults.
export {
  OsworldVmServerClient,
  VM_SERVER_DEADLINES_MS,
  VM_SERVER_RETRY_RULES,
  type OsworldVmServerClientOptions,
  type VmServerEndpoint,
  type VmServerRetryRules,
} from './vm-server/osworld-vm-server-client.js';
export type { OsworldVmServer } from './vm-server/osworld-vm-server.js';
export {
  DownloadCache,
  type DownloadCacheOptions,
  type UrlFileSource,
} from './downloads/download-cache.js';
export type { PythonRunner } from './python-runners/python-runner.js';
export {
  GradingInfraError,
  VmServerUnreachableError,
  VmServerFaultError,
  DownloadFailedError,
  SetupFailedError,
} from './grading/grading-errors.js';

// Golden-case files for `verify-grading`: metric files, `_evaluate.json`, `_getters.json`.
export { portedMetrics } from './metrics/metric-registry.js';
export type { MetricContext, PortedMetric } from './metrics/metric-function.js';
export { LocalPythonRunner } from './python-runners/local-python-runner.js';
export {
  metricFixtureFileSchema,
  type MetricFixtureCase,
  type MetricFixtureFile,
} from './fixtures/metric-fixture-file.js';
export { runMetricFixtureCase, type FixtureCaseVerdict } from './fixtures/metric-fixture-case.js';
export {
  parseEvaluateFixtureFile,
  runEvaluateFixtureCase,
  type EvaluateFixtureFile,
  type EvaluateFixtureCase,
} from './fixtures/evaluate-fixture-file.js';
export {
  getterFixtureFileSchema,
  runGetterFixtureCase,
  type GetterFixtureFile,
  type GetterFixtureCase,
} from './fixtures/getter-fixture-file.js';
export {
  verifyGradingFixtures,
  verifyGradingExitCode,
  formatVerifyGradingReport,
  type VerifyGradingReport,
  type VerifyGradingOptions,
  type FixtureFileReport,
  type FixtureFileKind,
  type FixtureCaseFailure,
} from './fixtures/verify-grading.js';
