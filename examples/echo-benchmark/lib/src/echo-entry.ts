import type { BenchmarkEntry, BenchmarkTools } from '@benchfleet/benchmark-kit';

// The echo benchmark as the registry lists it: light (types only), so that `scheduler --help`
// names its tools without loading it.

export const echoTools: BenchmarkTools = {
  description: 'echo benchmark tools (an example)',
  load: async () => (await import('./echo-tools.js')).configureEchoTools,
};

export const echoEntry: BenchmarkEntry = {
  name: 'echo',
  tools: echoTools,
  load: async () => (await import('./echo-benchmark.js')).echoBenchmark,
};
