import { sql, type Kysely } from 'kysely';

// Frozen once released: later schema changes go into a new migration file.
// The echo benchmark's own table: what each attempt of a task answered, one row per attempt.

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('echo_answers')
    .addColumn('run_id', 'text', (c) => c.notNull())
    .addColumn('task_id', 'text', (c) => c.notNull())
    .addColumn('attempt', 'integer', (c) => c.notNull())
    .addColumn('answer', 'text', (c) => c.notNull())
    .addColumn('steps', 'integer', (c) => c.notNull())
    .addColumn('answered_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addPrimaryKeyConstraint('echo_answers_pk', ['run_id', 'task_id', 'attempt'])
    .addForeignKeyConstraint('echo_answers_attempt_fk', ['run_id', 'task_id', 'attempt'], 'attempts', ['run_id', 'task_id', 'attempt'], (c) => c.onDelete('cascade'))
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('echo_answers').execute();
}
