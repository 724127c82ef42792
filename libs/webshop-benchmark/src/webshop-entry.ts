import type { BenchmarkEntry } from '@benchfleet/benchmark-kit';
import { webshopTools } from './webshop-tools.js';

// WebShop as the registry lists it: light (its name and tools); its descriptor loads only when a
// command needs it.

export const webshopEntry: BenchmarkEntry = {
  name: 'webshop',
  tools: webshopTools,
  load: async () => (await import('./webshop-benchmark.js')).webshopBenchmark,
};
