import { Migrator, type Migration, type MigrationResult } from 'kysely';
import type { Database } from './database.js';

export class MigrationFailedError extends Error {
  override readonly name = 'MigrationFailedError';
  constructor(
    readonly migration: string,
    cause: unknown,
  ) {
    super(`migration ${migration} failed: ${cause instanceof Error ? cause.message : String(cause)}`, { cause });
  }
}

export interface MigrateReport {
  applied: string[];
}

/** Applies every pending migration in order; a no-op when the schema is current. */
export async function migrateToLatest(db: Database, migrations: Record<string, Migration>): Promise<MigrateReport> {
  const migrator = new Migrator({
    db,
    provider: { getMigrations: async () => migrations },
    migrationTableName: 'benchfleet_migrations',
    migrationLockTableName: 'benchfleet_migrations_lock',
  });
  const { error, results } = await migrator.migrateToLatest();
  const failed = results?.find((result: MigrationResult) => result.status === 'Error');
  if (failed) throw new MigrationFailedError(failed.migrationName, error);
  if (error) throw new MigrationFailedError('(setup)', error);
  return { applied: (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName) };
}
