// The echo benchmark's worker app, as a test starts it: `node --import tsx echo-worker.entry.ts`.
import { runBenchmarkWorker } from '@benchfleet/runs';
import { echoBenchmark } from './echo-benchmark.js';

await runBenchmarkWorker(echoBenchmark, process.argv);
