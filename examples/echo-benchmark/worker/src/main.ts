// worker-echo: the echo benchmark's worker app (its flags and episode: ../../lib).
import { echoBenchmark } from '@benchfleet/echo-benchmark';
import { runBenchmarkWorker } from '@benchfleet/runs';

await runBenchmarkWorker(echoBenchmark, process.argv);
