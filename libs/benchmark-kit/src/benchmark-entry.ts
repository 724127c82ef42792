import type { AnyBenchmark } from './benchmark-descriptor.js';
import type { BenchmarkTools } from './benchmark-tools.js';

// The light face of a benchmark that the registry lists: types only, so that the list can be read
// (the scheduler's help, its tools) without loading any benchmark.

/**
 * A benchmark as the registry lists it: its name and tools, light, and its descriptor loaded only
 * when a command needs it. Written in the benchmark's lib (`src/<name>-entry.ts`).
 */
export interface BenchmarkEntry {
  readonly name: string;
  readonly tools?: BenchmarkTools;
  load(): Promise<AnyBenchmark>;
}
