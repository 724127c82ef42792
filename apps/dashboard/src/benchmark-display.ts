// Every benchmark-specific display choice of the dashboard, keyed by benchmark name. The server
// builds them from the benchmark registry (`displaysOf` in dashboard-server.ts) and hands them to
// the browser (`/api/benchmarks`); both read them here. Nothing here imports the registry, so the
// browser bundle stays free of it.

export type TrajectoryView = 'screenshots' | 'webshop-pages';

export interface BenchmarkDisplay {
  /** What "success" means for this benchmark, shown next to every success rate. */
  successLabel: string;
  successExplanation: string;
  trajectoryView: TrajectoryView;
  /** The BullMQ queue its tasks go to, for the fleet panel. */
  queue: string;
  /** How a user adds a worker, for the "nothing is consuming this run" notice. */
  workerCommand: string;
  /** Why a task ended, by `tasks.result.stop_reason`. */
  stopReasons: Record<string, string>;
  /** What a `tasks.final_api_status` means. */
  finalStatuses: Record<string, string>;
  /** The heading of the benchmark's own failure reason in the Failures panel, if it gives one. */
  failureReasonLabel: string | null;
}

const UNKNOWN: BenchmarkDisplay = {
  successLabel: 'as recorded',
  successExplanation: 'The success flag as the worker recorded it.',
  trajectoryView: 'webshop-pages',
  queue: '',
  workerCommand: '',
  stopReasons: {},
  finalStatuses: {},
  failureReasonLabel: null,
};

let displays: Record<string, BenchmarkDisplay> = {};

/** Set once: by the server from its registry, by the browser from `/api/benchmarks`. */
export function setBenchmarkDisplays(next: Record<string, BenchmarkDisplay>): void {
  displays = next;
}

export function benchmarkDisplay(benchmark: string): BenchmarkDisplay {
  return displays[benchmark] ?? UNKNOWN;
}
