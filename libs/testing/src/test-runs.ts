import { benchmarks } from '@benchfleet/benchmarks';
import type { BenchmarkRegistry } from '@benchfleet/benchmark-kit';
import type { Database } from '@benchfleet/db';
import type { JobProducer } from '@benchfleet/queue';
import { enqueueRun, planRun, type EnqueueInput } from '@benchfleet/runs';

export type TestRunInput = Partial<EnqueueInput> & { benchmark: string };

/** Plans and enqueues a run as `scheduler enqueue` does (flags as typed); returns its id. */
export async function enqueueTestRun(
  deps: { db: Database; producer: JobProducer },
  input: TestRunInput,
  registry: BenchmarkRegistry = benchmarks,
): Promise<string> {
  const planned = await planRun(
    registry,
    { domains: [], flags: {}, ...input },
    { db: deps.db, env: process.env },
  );
  return enqueueRun(deps, planned);
}
