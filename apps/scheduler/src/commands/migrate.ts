import { migrateToLatest } from '@benchfleet/db';
import { migrations } from '@benchfleet/migrations';
import { withSchedulerServices } from '../config.js';

export async function migrateCommand(): Promise<void> {
  await withSchedulerServices({ redis: false, schema: false }, async ({ db }) => {
    const { applied } = await migrateToLatest(db, migrations);
    process.stdout.write(applied.length ? `applied ${applied.length} migration(s): ${applied.join(', ')}\n` : 'schema is up to date\n');
  });
}
