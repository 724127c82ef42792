import { Migrator, type Migration, type MigrationResult } from 'kysely';
import { UsageError } from '@benchfleet/core';
import type { Database } from './database.js';

export class MigrationFailedError extends Error {
  override readonly name = 'MigrationFailedError';
  constructor(
    readonly migration: string,
    cause: unknown,
  ) {
    super(
      `migration ${migration} failed: ${cause instanceof Error ? cause.message : String(cause)}`,
      { cause },
    );
  }
}

export interface MigrateReport {
  applied: string[];
}

function migratorOf(db: Database, migrations: Record<string, Migration>): Migrator {
  return new Migrator({
    db,
    provider: { getMigrations: async () => migrations },
    migrationTableName: 'benchfleet_migrations',
    migrationLockTableName: 'benchfleet_migrations_lock',
    // A benchmark registered after newer migrations ran brings its own, older-named ones: they run then.
    allowUnorderedMigrations: true,
  });
}

/** One owner's migrations: the core's, or a benchmark's (its own tables). */
export interface MigrationSet {
  readonly owner: string;
  readonly migrations: Readonly<Record<string, Migration>>;
}

/**
 * The core's migrations and every benchmark's, as the one set the migrator runs, in name order; a
 * name two owners share is refused (a migration's name is its identity in benchfleet_migrations).
 */
export function mergeMigrations(sets: readonly MigrationSet[]): Record<string, Migration> {
  const owners = new Map<string, string>();
  const merged = new Map<string, Migration>();
  const problems: string[] = [];
  for (const { owner, migrations } of sets) {
    for (const [name, migration] of Object.entries(migrations)) {
      const first = owners.get(name);
      if (first) problems.push(`migration ${name} of ${owner} is ${first}'s already`);
      owners.set(name, owner);
      merged.set(name, migration);
    }
  }
  if (problems.length) throw new Error(`migrations: ${problems.join('; ')}`);
  return Object.fromEntries([...merged].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

/** Applies every pending migration in order; a no-op when the schema is current. */
export async function migrateToLatest(
  db: Database,
  migrations: Record<string, Migration>,
): Promise<MigrateReport> {
  const migrator = migratorOf(db, migrations);
  const { error, results } = await migrator.migrateToLatest();
  const failed = results?.find((result: MigrationResult) => result.status === 'Error');
  if (failed) throw new MigrationFailedError(failed.migrationName, error);
  if (error) throw new MigrationFailedError('(setup)', error);
  return {
    applied: (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName),
  };
}

/**
 * Refuses, in one line that says to run `scheduler migrate`, a database whose schema is not the
 * one this build expects: every command and worker checks it before using a table.
 */
export async function checkSchema(
  db: Database,
  migrations: Record<string, Migration>,
  variable = 'DATABASE_URL',
): Promise<void> {
  const known = await migratorOf(db, migrations).getMigrations();
  const pending = known
    .filter((migration) => migration.executedAt === undefined)
    .map((migration) => migration.name);
  if (pending.length === 0) return;
  const state =
    pending.length === known.length
      ? 'has no benchfleet schema yet'
      : `lacks ${pending.length} of ${known.length} migrations (${pending.join(', ')})`;
  throw new UsageError(`the database at ${variable} ${state}: run \`scheduler migrate\` first`);
}
