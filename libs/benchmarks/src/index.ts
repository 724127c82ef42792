import { createBenchmarkRegistry } from '@benchfleet/benchmark-kit';
import { osworldBenchmark } from '@benchfleet/osworld';
import { webshopBenchmark } from '@benchfleet/webshop-benchmark';

/** The benchmarks this fleet runs: registering one is one line here (see README, "Adding a benchmark"). */
export const benchmarks = createBenchmarkRegistry([osworldBenchmark, webshopBenchmark]);
