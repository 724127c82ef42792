export * from './python-value.js';
export type {
  MetricContext,
  MetricFunction,
  PortedMetric,
  PythonRunner,
} from './metric-function.js';
export { portedMetrics } from './metric-registry.js';
export {
  metricFixtureFileSchema,
  decodeFixtureArgs,
  type MetricFixtureCase,
  type MetricFixtureFile,
  type FixtureArg,
} from './fixtures/metric-fixture-file.js';
export { runMetricFixtureCase, type FixtureCaseVerdict } from './fixtures/metric-fixture-case.js';
export { LocalPythonRunner } from './local-python-runner.js';
export { UnsupportedPythonFeature } from './python-exceptions.js';

// Grading a task on a desktop: classify → set up → (agent) → grade; regrade from the saved end state.
export {
  prepareTask,
  validateGradedTasks,
  describeFidelity,
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
export { VmPythonRunner } from './python/vm-python-runner.js';
export {
  GradingInfraError,
  VmServerUnreachableError,
  VmServerFaultError,
  DownloadFailedError,
  SetupFailedError,
} from './grading-errors.js';

// Golden-case files for `verify-grading` (metric files: runMetricFixtureCase above).
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
