export {
  osworldDatasetSchema,
  osworldTaskSchema,
  osworldTaskListSchema,
  type OsworldDataset,
  type OsworldTask,
  type OsworldTaskList,
} from './osworld-dataset.js';
export {
  extractOsworldDataset,
  writeOsworldDataset,
  OsworldDatasetError,
  UnknownOsworldDomainError,
  type ExtractOsworldDatasetOptions,
  type OsworldDatasetExtraction,
} from './osworld-dataset-extraction.js';
export { loadOsworldDataset, type LoadOsworldDatasetOptions } from './osworld-dataset-loading.js';
export {
  bytebotModelSchema,
  BYTEBOT_TASK_STATUSES,
  BYTEBOT_END_STATUSES,
  isBytebotEndStatus,
  type BytebotTaskStatus,
  type BytebotModel,
  type BytebotTask,
  type BytebotTaskPage,
  type BytebotMessage,
  type BytebotContentBlock,
} from './bytebot-api.js';
export {
  BytebotClient,
  BYTEBOT_DEFAULT_RETRY_DELAYS_MS,
  BytebotUnavailableError,
  BytebotHttpError,
  BytebotResponseError,
  type BytebotClientOptions,
  type BytebotRequestOptions,
  type BytebotCancelResult,
  type BytebotMessageSlice,
  type BytebotTaskEventHandlers,
  type BytebotTaskSubscription,
  type CreateBytebotTaskInput,
  type WaitUntilIdleOptions,
} from './bytebot-client.js';
export type { BytebotToolCall } from './bytebot-message-content.js';
export {
  runOsworldEpisode,
  cancelLeftoverTask,
  cancelLeftoverTasks,
  OsworldEpisodeAbortedError,
  type RunOsworldEpisodeOptions,
  type OsworldEpisodeSink,
  type OsworldEpisodeStep,
  type OsworldEpisodeOutcome,
  type OsworldEpisodeStatus,
  type OsworldEpisodeStopReason,
  type OsworldEpisodeClock,
  type LeftoverTaskOutcome,
} from './osworld-episode.js';
export { BytebotDesktopClient, DESKTOP_PROBE_TIMEOUT_MS } from './bytebot-desktop.js';
export {
  StackWatch,
  DesktopLostError,
  STACK_WATCH_DEFAULTS,
  type StackLoss,
  type StackPart,
  type StackProbe,
  type StackWatchOptions,
} from './stack-watch.js';
export { buildOsworldFinalJson, type OsworldFinalJson } from './osworld-summary.js';
export {
  writeOsworldLogs,
  type OsworldLogRun,
  type OsworldLogTask,
  type OsworldLogStep,
  type OsworldScreenshotSource,
} from './osworld-logs-exporter.js';
export { formatPythonJson, formatPythonUtcTimestamp } from './python-compatible-format.js';
export { osworldBenchmark } from './osworld-benchmark.js';
export { OSWORLD_DOMAINS } from './osworld-dataset.js';
export { osworldWorker, osworldWorkerFlags } from './osworld-worker.js';
export {
  osworldRunConfigSchema,
  osworldTaskResultSchema,
  osworldStepActionSchema,
  type OsworldRunConfig,
  type OsworldTaskResult,
} from './osworld-run-config.js';
export { osworldLogsExporter, EXPORT_PROBLEMS_FILE } from './osworld-logs-export.js';
export {
  runGradedOsworldTask,
  setupRecordOf,
  EvaluationInfraError,
  type GradedOsworldStack,
  type GradedOsworldTaskResult,
  type GradedTaskDeadlines,
  type GradedTaskPhase,
  type RunGradedOsworldTaskOptions,
} from './graded-osworld-task.js';
export {
  osworldGradeOf,
  agentNotStartedGrade,
  workerCannotGradeGrade,
  FINAL_SIGNAL_MAPPING_ID,
  type OsworldGrade,
  type OsworldNoScoreCause,
  type OsworldEndStateArtifact,
  type OsworldSetupRecord,
  type GradedTaskTimings,
} from './osworld-grade.js';
export {
  runResetCommand,
  waitForStackReady,
  vmServerProbe,
  StackResetError,
  StackNotReadyError,
  STACK_RESET_DEFAULTS,
  type ResetCommandReport,
  type ResetCommandOptions,
  type StackResetReport,
  type StackReadinessOptions,
} from './stack-reset.js';
export {
  OsworldGradesRepository,
  type GradedAttemptKey,
  type OsworldGradeRow,
  type OsworldTaskGradeRow,
  type OsworldRunGradingRow,
  type OsworldDomainGradingRow,
  type RegradeSourceRow,
  type RegradeWrite,
} from './osworld-grades-repository.js';
export {
  regradeOsworld,
  type RegradeOsworldOptions,
  type RegradeReport,
  type RegradeTaskReport,
} from './osworld-regrade.js';
export { BYTEBOT_SCREEN, parseScreenSize } from './osworld-screen.js';
export { NO_DESKTOP_SERVER_REASON } from './osworld-graded-episode.js';
export { GRADED_EXAMPLE_QUERIES } from './osworld-example-queries.js';
