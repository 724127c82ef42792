import { sql, type Kysely } from 'kysely';

// Frozen once released: later schema changes go into a new migration file.
// A catalog gets a version per import; its search index is stored once, as a snapshot file in
// chunks, for that version. Re-importing a catalog id replaces the catalog row, and the cascade
// removes the old snapshot with it.
// Products and goals become json instead of jsonb: jsonb reorders object keys (shorter first),
// and the order of a product's options is what its item page shows. Rows stored before keep the
// order jsonb gave them; re-import a catalog to get the file's order back.

export async function up(db: Kysely<any>): Promise<void> {
  await sql`alter table webshop_products alter column product type json using product::json`.execute(db);
  await sql`alter table webshop_goals alter column goal type json using goal::json`.execute(db);
  await db.schema
    .alterTable('webshop_catalogs')
    .addColumn('version', 'text', (c) => c.notNull().defaultTo(sql`gen_random_uuid()::text`))
    .execute();

  await db.schema
    .createTable('webshop_search_snapshots')
    .addColumn('catalog_id', 'text', (c) => c.primaryKey().references('webshop_catalogs.id').onDelete('cascade'))
    .addColumn('version', 'text', (c) => c.notNull())
    .addColumn('format', 'integer', (c) => c.notNull())
    .addColumn('bytes', 'bigint', (c) => c.notNull())
    .addColumn('sha256', 'text', (c) => c.notNull())
    .addColumn('chunks', 'integer', (c) => c.notNull())
    .addColumn('built_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();

  await db.schema
    .createTable('webshop_search_snapshot_chunks')
    .addColumn('catalog_id', 'text', (c) => c.notNull().references('webshop_search_snapshots.catalog_id').onDelete('cascade'))
    .addColumn('chunk', 'integer', (c) => c.notNull())
    .addColumn('data', 'bytea', (c) => c.notNull())
    .addPrimaryKeyConstraint('webshop_search_snapshot_chunks_pk', ['catalog_id', 'chunk'])
    .execute();

  // Snapshot builds read a catalog's products in catalog order, page by page.
  await db.schema.createIndex('webshop_products_seq_idx').on('webshop_products').columns(['catalog_id', 'seq']).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('webshop_products_seq_idx').execute();
  await db.schema.dropTable('webshop_search_snapshot_chunks').execute();
  await db.schema.dropTable('webshop_search_snapshots').execute();
  await db.schema.alterTable('webshop_catalogs').dropColumn('version').execute();
  await sql`alter table webshop_goals alter column goal type jsonb using goal::jsonb`.execute(db);
  await sql`alter table webshop_products alter column product type jsonb using product::jsonb`.execute(db);
}
