import type { BenchmarkEntry, BenchmarkTools } from '@benchfleet/benchmark-kit';

// WebShop as the registry lists it: light (types only), so `scheduler --help` loads nothing more.

export const webshopTools: BenchmarkTools = {
  description: 'WebShop catalog and parity tools',
  load: async () => (await import('./webshop-tools.js')).configureWebshopTools,
};

export const webshopEntry: BenchmarkEntry = {
  name: 'webshop',
  tools: webshopTools,
  load: async () => (await import('./webshop-benchmark.js')).webshopBenchmark,
};
