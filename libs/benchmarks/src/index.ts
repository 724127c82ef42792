import { loadBenchmarkRegistry } from '@benchfleet/benchmark-kit';
import { benchmarkEntries } from './benchmark-entries.js';

/** The registry of the benchmarks this fleet runs, their descriptors loaded (see ./benchmark-entries.ts). */
export const benchmarks = await loadBenchmarkRegistry(benchmarkEntries);
