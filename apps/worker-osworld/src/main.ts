// worker-osworld: OSWorld tasks on one Bytebot stack (its flags and episode: libs/osworld).
import { osworldBenchmark } from '@benchfleet/osworld';
import { runBenchmarkWorker } from '@benchfleet/runs';

await runBenchmarkWorker(osworldBenchmark, process.argv);
