import type { BenchmarkEntry, BenchmarkTools } from '@benchfleet/benchmark-kit';

// OSWorld as the registry lists it: light (types only), so `scheduler --help` loads nothing more.

export const osworldTools: BenchmarkTools = {
  description: 'OSWorld dataset tools',
  load: async () => (await import('./osworld-tools.js')).configureOsworldTools,
};

export const osworldEntry: BenchmarkEntry = {
  name: 'osworld',
  tools: osworldTools,
  load: async () => (await import('./osworld-benchmark.js')).osworldBenchmark,
};
