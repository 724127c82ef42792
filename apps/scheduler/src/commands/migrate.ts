import { migrateToLatest } from '@benchfleet/db';
import type { BenchmarkRegistry } from '@benchfleet/benchmark-kit';
import type { Command } from 'commander';
import { withSchedulerServices } from '../config.js';

export function configureMigrate(command: Command, registry: BenchmarkRegistry): void {
  command.action(() => migrate(registry));
}

/** The core's tables and every registered benchmark's, in name order. */
async function migrate(registry: BenchmarkRegistry): Promise<void> {
  await withSchedulerServices(
    { redis: false, schema: false, longStatements: true },
    async ({ db }) => {
      const { applied } = await migrateToLatest(db, registry.migrations);
      process.stdout.write(
        applied.length
          ? `applied ${applied.length} migration(s): ${applied.join(', ')}\n`
          : 'schema is up to date\n',
      );
    },
  );
}
