import { sql, type Kysely } from 'kysely';

// Frozen once released: later schema changes go into a new migration file.
//
// A worker's health check writes its row here every few seconds: a Postgres that answers reads
// but refuses writes (a replica after a failover, default_transaction_read_only, a full disk)
// fails it, where `select 1` passed and every job used up its attempts on the refused writes.

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('worker_health')
    .addColumn('worker_id', 'text', (c) => c.primaryKey())
    .addColumn('checked_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('worker_health').execute();
}
