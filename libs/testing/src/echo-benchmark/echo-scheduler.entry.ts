// The scheduler of a fleet that adds the echo benchmark to its own: `node --import tsx echo-scheduler.entry.ts …`.
import { createBenchmarkRegistry } from '@benchfleet/benchmark-kit';
import { benchmarks } from '@benchfleet/benchmarks';
import { benchmarkEntries } from '@benchfleet/benchmarks/entries';
import { runSchedulerCli } from '@benchfleet/scheduler';
import { echoBenchmark } from './echo-benchmark.js';

await runSchedulerCli(
  {
    entries: [...benchmarkEntries, { name: 'echo', load: async () => echoBenchmark }],
    registry: async () => createBenchmarkRegistry([...benchmarks.all, echoBenchmark]),
  },
  process.argv,
);
