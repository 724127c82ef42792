import { describe, expect, it } from 'vitest';
import type { Migration } from 'kysely';
import { coreMigrations } from '@benchfleet/migrations';
import { osworldBenchmark } from '@benchfleet/osworld';
import { webshopBenchmark } from '@benchfleet/webshop-benchmark';
import type { AnyBenchmark } from './benchmark-descriptor.js';
import { createBenchmarkRegistry, loadBenchmarkRegistry } from './benchmark-registry.js';

const noop: Migration = { up: async () => undefined };

/** A copy of a registered benchmark under another name, queue, job and flags, with tables of its own. */
function another(name: string, migrations: Record<string, Migration>): AnyBenchmark {
  const base = webshopBenchmark as unknown as AnyBenchmark;
  return {
    ...base,
    name,
    job: { ...base.job, name: `${name}-task`, queue: name },
    enqueueFlags: osworldBenchmark.enqueueFlags.pick({}),
    migrations,
  };
}

describe('the benchmark registry', () => {
  it("merges the core's migrations with each benchmark's, in name order", () => {
    const registry = createBenchmarkRegistry([
      osworldBenchmark as unknown as AnyBenchmark,
      webshopBenchmark as unknown as AnyBenchmark,
      another('late', { '20200101000000_older_than_all': noop }),
    ]);
    const names = Object.keys(registry.migrations);
    expect(names).toEqual([...names].sort());
    expect(names[0]).toBe('20200101000000_older_than_all');
    for (const name of [
      ...Object.keys(coreMigrations),
      ...Object.keys(webshopBenchmark.migrations ?? {}),
    ])
      expect(names).toContain(name);
  });

  it('refuses a migration name two owners share, with everything else wrong, in one error', () => {
    const core = Object.keys(coreMigrations)[0]!;
    expect(() =>
      createBenchmarkRegistry([
        another('one', { [core]: noop }),
        another('one', { '20300101000000_x': noop }),
      ]),
    ).toThrow(
      new RegExp(`two benchmarks named one.*migration ${core} of one is the core's already`),
    );
  });

  it("refuses an entry whose descriptor is another benchmark, or whose tools are not its descriptor's", async () => {
    await expect(
      loadBenchmarkRegistry([
        { name: 'webshop', load: async () => osworldBenchmark as unknown as AnyBenchmark },
      ]),
    ).rejects.toThrow(/entry webshop loads benchmark osworld/);
    await expect(
      loadBenchmarkRegistry([
        { name: 'osworld', load: async () => osworldBenchmark as unknown as AnyBenchmark },
      ]),
    ).rejects.toThrow(/entry osworld lists other tools than its descriptor/);
  });
});
