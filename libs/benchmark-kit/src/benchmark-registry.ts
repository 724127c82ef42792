import type { Migration } from 'kysely';
import { flagFields } from '@benchfleet/core';
import { mergeMigrations } from '@benchfleet/db';
import { coreMigrations } from '@benchfleet/migrations';
import { AGGREGATE_QUEUE } from '@benchfleet/queue';
import type { AnyBenchmark } from './benchmark-descriptor.js';
import type { BenchmarkEntry } from './benchmark-entry.js';

/** Names a run's benchmark that this build of the fleet does not know. */
class UnknownBenchmarkError extends Error {
  override readonly name = 'UnknownBenchmarkError';
}

/** The benchmarks a fleet runs; shared code iterates it instead of naming any benchmark. */
export interface BenchmarkRegistry {
  readonly all: readonly AnyBenchmark[];
  find(name: string): AnyBenchmark | undefined;
  /** The benchmark of that name, or an UnknownBenchmarkError listing the known ones. */
  get(name: string): AnyBenchmark;
  /** Every task queue, in registration order. */
  readonly taskQueues: readonly string[];
  /** The core's migrations and every benchmark's, merged in name order: the schema this fleet needs. */
  readonly migrations: Readonly<Record<string, Migration>>;
}

/** Refuses two benchmarks sharing a name, a queue, a job name or a flag. */
export function createBenchmarkRegistry(benchmarks: readonly AnyBenchmark[]): BenchmarkRegistry {
  const problems: string[] = [];
  const seen = {
    name: new Set<string>(),
    queue: new Set<string>([AGGREGATE_QUEUE]),
    job: new Set<string>(),
    flag: new Map<string, string>(),
  };
  for (const benchmark of benchmarks) {
    if (!/^[a-z][a-z0-9-]*$/.test(benchmark.name))
      problems.push(
        `benchmark name ${JSON.stringify(benchmark.name)}: lower-case letters, digits and - only`,
      );
    if (seen.name.has(benchmark.name)) problems.push(`two benchmarks named ${benchmark.name}`);
    if (seen.queue.has(benchmark.job.queue))
      problems.push(`queue ${benchmark.job.queue} of ${benchmark.name} is taken`);
    if (seen.job.has(benchmark.job.name))
      problems.push(`job ${benchmark.job.name} of ${benchmark.name} is taken`);
    seen.name.add(benchmark.name);
    seen.queue.add(benchmark.job.queue);
    seen.job.add(benchmark.job.name);
    for (const field of flagFields(benchmark.enqueueFlags)) {
      if (field.long === null) continue;
      const owner = seen.flag.get(field.long);
      if (owner) problems.push(`flag ${field.long} of ${benchmark.name} is ${owner}'s already`);
      seen.flag.set(field.long, benchmark.name);
    }
  }
  let migrations: Record<string, Migration> = {};
  try {
    migrations = mergeMigrations([
      { owner: 'the core', migrations: coreMigrations },
      ...benchmarks.map((benchmark) => ({
        owner: benchmark.name,
        migrations: benchmark.migrations ?? {},
      })),
    ]);
  } catch (error) {
    problems.push(error instanceof Error ? error.message : String(error));
  }
  if (problems.length) throw new Error(`benchmark registry: ${problems.join('; ')}`);
  const byName = new Map(benchmarks.map((benchmark) => [benchmark.name, benchmark]));
  return {
    all: benchmarks,
    find: (name) => byName.get(name),
    get(name) {
      const found = byName.get(name);
      if (!found)
        throw new UnknownBenchmarkError(
          `benchmark ${name} is not known to this build (known: ${[...byName.keys()].join(', ')})`,
        );
      return found;
    },
    taskQueues: benchmarks.map((benchmark) => benchmark.job.queue),
    migrations,
  };
}

/** The registry of the listed benchmarks, each descriptor loaded; an entry that is not its descriptor's face is refused. */
export async function loadBenchmarkRegistry(
  entries: readonly BenchmarkEntry[],
): Promise<BenchmarkRegistry> {
  const loaded = await Promise.all(entries.map((entry) => entry.load()));
  const problems = entries.flatMap((entry, index) => {
    const descriptor = loaded[index]!;
    if (descriptor.name !== entry.name)
      return [`entry ${entry.name} loads benchmark ${descriptor.name}`];
    if (descriptor.tools !== entry.tools)
      return [`entry ${entry.name} lists other tools than its descriptor`];
    return [];
  });
  if (problems.length) throw new Error(`benchmark registry: ${problems.join('; ')}`);
  return createBenchmarkRegistry(loaded);
}
