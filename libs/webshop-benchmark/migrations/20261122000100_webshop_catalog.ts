import { sql, type Kysely } from 'kysely';

// Frozen once released: later schema changes go into a new migration file.

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('webshop_catalogs')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('source', 'jsonb', (c) => c.notNull())
    .addColumn('goal_seed', 'integer', (c) => c.notNull())
    .addColumn('products', 'integer', (c) => c.notNull())
    .addColumn('goals', 'integer', (c) => c.notNull())
    .addColumn('imported_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();

  await db.schema
    .createTable('webshop_products')
    .addColumn('catalog_id', 'text', (c) => c.notNull().references('webshop_catalogs.id').onDelete('cascade'))
    .addColumn('seq', 'integer', (c) => c.notNull())
    .addColumn('asin', 'text', (c) => c.notNull())
    // The hidden price the reward compares with price_upper, drawn once from the catalog's seed.
    .addColumn('price', 'double precision', (c) => c.notNull())
    .addColumn('product', 'jsonb', (c) => c.notNull())
    .addPrimaryKeyConstraint('webshop_products_pk', ['catalog_id', 'asin'])
    .execute();

  await db.schema
    .createTable('webshop_goals')
    .addColumn('catalog_id', 'text', (c) => c.notNull().references('webshop_catalogs.id').onDelete('cascade'))
    .addColumn('goal_index', 'integer', (c) => c.notNull())
    .addColumn('split', 'text', (c) => c.notNull().check(sql`split in ('test', 'eval', 'train')`))
    .addColumn('asin', 'text', (c) => c.notNull())
    .addColumn('instruction', 'text', (c) => c.notNull())
    .addColumn('goal', 'jsonb', (c) => c.notNull())
    .addPrimaryKeyConstraint('webshop_goals_pk', ['catalog_id', 'goal_index'])
    .execute();
  await db.schema.createIndex('webshop_goals_split_idx').on('webshop_goals').columns(['catalog_id', 'split']).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('webshop_goals').execute();
  await db.schema.dropTable('webshop_products').execute();
  await db.schema.dropTable('webshop_catalogs').execute();
}
