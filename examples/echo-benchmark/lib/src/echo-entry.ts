import type { BenchmarkEntry } from '@benchfleet/benchmark-kit';
import { echoTools } from './echo-tools.js';

// The echo benchmark as the registry lists it: light (its name and tools), so that `scheduler
// --help` names its tools without loading it; its descriptor loads when a command needs it.

export const echoEntry: BenchmarkEntry = {
  name: 'echo',
  tools: echoTools,
  load: async () => (await import('./echo-benchmark.js')).echoBenchmark,
};
