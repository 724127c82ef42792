export { type OsworldDataset, type OsworldTask } from './osworld-dataset.js';
export { loadOsworldDataset } from './osworld-dataset-loading.js';
export { BytebotClient } from './bytebot-client.js';
export { runOsworldEpisode } from './osworld-episode.js';
export { BytebotDesktopClient } from './bytebot-desktop.js';
export { osworldBenchmark } from './osworld-benchmark.js';
export { osworldWorkerFlags } from './osworld-worker.js';
export {
  runGradedOsworldTask,
  setupRecordOf,
  type RunGradedOsworldTaskOptions,
} from './graded-osworld-task.js';
export {
  FINAL_SIGNAL_MAPPING_ID,
  type OsworldGrade,
  type OsworldSetupRecord,
} from './osworld-grade.js';
export { OsworldGradesRepository, type OsworldRunGradingRow } from './osworld-grades-repository.js';
export { BYTEBOT_SCREEN } from './osworld-screen.js';
export { NO_DESKTOP_SERVER_REASON } from './osworld-graded-episode.js';
