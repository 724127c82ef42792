// worker-webshop: WebShop episodes, many at once (its flags and episode: libs/webshop-benchmark).
import { runBenchmarkWorker } from '@benchfleet/runs';
import { webshopBenchmark } from '@benchfleet/webshop-benchmark';

await runBenchmarkWorker(webshopBenchmark, process.argv);
