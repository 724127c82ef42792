// The scheduler of a fleet that adds the echo benchmark to its own: `node --import tsx echo-scheduler.entry.ts …`.
import { createBenchmarkRegistry } from '@benchfleet/benchmark-kit';
import { benchmarks } from '@benchfleet/benchmarks';
import { runSchedulerCli } from '@benchfleet/scheduler';
import { echoBenchmark } from './echo-benchmark.js';

await runSchedulerCli(createBenchmarkRegistry([...benchmarks.all, echoBenchmark]), process.argv);
