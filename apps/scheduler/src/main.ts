import { benchmarks } from '@benchfleet/benchmarks';
import { runSchedulerCli } from './scheduler-cli.js';

await runSchedulerCli(benchmarks, process.argv);
