import { runSchedulerCli } from './scheduler-cli.js';

// The benchmarks load only for a command that uses them: `scheduler --help` stays fast.
await runSchedulerCli(
  async () => (await import('@benchfleet/benchmarks')).benchmarks,
  process.argv,
);
