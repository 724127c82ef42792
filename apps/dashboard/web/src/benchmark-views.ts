import { UNKNOWN_BENCHMARK_VIEW } from '../../shared/unknown-benchmark';
import type { BenchmarkView } from './api';

// How each benchmark is shown, as the server built it from its registry (`/api/benchmarks`):
// loaded once before the first render. The browser asks by name and never names a benchmark.

let views: Record<string, BenchmarkView> = {};

export async function loadBenchmarkViews(): Promise<void> {
  const response = await fetch('/api/benchmarks');
  views = response.ok ? ((await response.json()) as Record<string, BenchmarkView>) : {};
}

export function benchmarkView(benchmark: string): BenchmarkView {
  return views[benchmark] ?? UNKNOWN_BENCHMARK_VIEW;
}
