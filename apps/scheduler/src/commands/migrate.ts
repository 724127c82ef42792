export async function migrateCommand(): Promise<void> {
  const [{ migrateToLatest }, { migrations }, { withSchedulerServices }] = await Promise.all([import('@benchfleet/db'), import('@benchfleet/migrations'), import('../config.js')]);
  await withSchedulerServices({ redis: false }, async ({ db }) => {
    const { applied } = await migrateToLatest(db, migrations);
    process.stdout.write(applied.length ? `applied ${applied.length} migration(s): ${applied.join(', ')}\n` : 'schema is up to date\n');
  });
}
