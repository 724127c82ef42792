import { migrateToLatest } from '@benchfleet/db';
import { migrations } from '@benchfleet/migrations';
import type { Command } from 'commander';
import { withSchedulerServices } from '../config.js';

export function configureMigrate(command: Command): void {
  command.action(migrate);
}

async function migrate(): Promise<void> {
  await withSchedulerServices(
    { redis: false, schema: false, longStatements: true },
    async ({ db }) => {
      const { applied } = await migrateToLatest(db, migrations);
      process.stdout.write(
        applied.length
          ? `applied ${applied.length} migration(s): ${applied.join(', ')}\n`
          : 'schema is up to date\n',
      );
    },
  );
}
