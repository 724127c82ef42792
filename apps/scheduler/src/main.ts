import { benchmarkEntries } from '@benchfleet/benchmarks/entries';
import { runSchedulerCli } from './scheduler-cli.js';

// The benchmarks' descriptors load only for a command that uses them: `scheduler --help` stays fast.
await runSchedulerCli(
  {
    entries: benchmarkEntries,
    registry: async () => (await import('@benchfleet/benchmarks')).benchmarks,
  },
  process.argv,
);
