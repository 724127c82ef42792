import type { BenchmarkEntry } from '@benchfleet/benchmark-kit';
import { osworldTools } from './osworld-tools.js';

// OSWorld as the registry lists it: light (its name and tools); its descriptor loads only when a
// command needs it.

export const osworldEntry: BenchmarkEntry = {
  name: 'osworld',
  tools: osworldTools,
  load: async () => (await import('./osworld-benchmark.js')).osworldBenchmark,
};
