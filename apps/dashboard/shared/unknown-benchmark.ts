import type { BenchmarkView } from './view-rows.js';

/** How a run of a benchmark this build does not know is shown: as recorded, in the generic step view. */
export const UNKNOWN_BENCHMARK_VIEW: BenchmarkView = {
  successLabel: 'as recorded',
  successExplanation: 'The success flag as the worker recorded it.',
  trajectory: 'steps',
  queue: '',
  workerCommand: '',
  stopReasons: {},
  finalStatuses: {},
  failureReasonLabel: null,
  grade: null,
};
