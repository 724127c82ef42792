import {
  DEFAULT_TRAJECTORY_PANEL,
  type AnyBenchmark,
  type BenchmarkRegistry,
  type TaskDetailContext,
  type TaskPanel,
} from '@benchfleet/benchmark-kit';
import type { NamedQuery } from '@benchfleet/db';
import { UNKNOWN_BENCHMARK_VIEW } from '../shared/unknown-benchmark.js';
import type { BenchmarkView } from '../shared/view-rows.js';
import { failuresQueryFor } from './run-queries.js';

// Every benchmark-specific choice the dashboard makes is read here, off each descriptor's
// `display`: the rest of the server and the browser ask by benchmark name and never name one.

function viewOf(benchmark: AnyBenchmark): BenchmarkView {
  const { display } = benchmark;
  return {
    successLabel: benchmark.success.label,
    successExplanation: `${benchmark.title} success: ${benchmark.success.meaning}.`,
    trajectory: display.trajectory ?? DEFAULT_TRAJECTORY_PANEL,
    queue: benchmark.job.queue,
    workerCommand: display.workerCommand,
    stopReasons: { ...display.stopReasons },
    finalStatuses: { ...display.finalStatuses },
    failureReasonLabel: display.failureReason?.label ?? null,
  };
}

type TaskDetailFunction = (context: TaskDetailContext) => Promise<readonly TaskPanel[]>;

/** The registry's display choices, as the dashboard uses them. */
export class BenchmarkViews {
  private readonly views: Record<string, BenchmarkView>;
  private readonly failures: Map<string, NamedQuery<'run'>>;
  private readonly plainFailures = failuresQueryFor(undefined);

  constructor(private readonly registry: BenchmarkRegistry) {
    this.views = Object.fromEntries(
      registry.all.map((benchmark) => [benchmark.name, viewOf(benchmark)]),
    );
    // Each benchmark groups its failures by its own reason, where it gives one.
    this.failures = new Map(
      registry.all.map((benchmark) => [
        benchmark.name,
        failuresQueryFor(benchmark.display.failureReason?.sql),
      ]),
    );
  }

  /** What the browser gets (`/api/benchmarks`), by benchmark name. */
  all(): Record<string, BenchmarkView> {
    return this.views;
  }

  view(benchmark: string): BenchmarkView {
    return this.views[benchmark] ?? UNKNOWN_BENCHMARK_VIEW;
  }

  /** The Failures panel's query for a run of this benchmark. */
  failuresQuery(benchmark: string): NamedQuery<'run'> {
    return this.failures.get(benchmark) ?? this.plainFailures;
  }

  /** The benchmark's own task panels, if it has any. */
  taskDetail(benchmark: string): TaskDetailFunction | undefined {
    const display = this.registry.find(benchmark)?.display;
    return display?.taskDetail?.bind(display);
  }
}
