import { sql, type Kysely } from 'kysely';

// Frozen once released: later schema changes go into a new migration file.
//
// Full-text search over a task's instruction, answer and error (the dashboard's task search). An
// expression index, not a stored tsvector column: the rows the task list reads stay as narrow as
// before, so the unfiltered list is not slowed; a query uses the index when it repeats this
// expression exactly (English stemming; the three texts joined by spaces).

export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create index tasks_text_search on tasks using gin (
      to_tsvector('english'::regconfig, coalesce(instruction, '') || ' ' || coalesce(answer, '') || ' ' || coalesce(error, ''))
    )
  `.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop index if exists tasks_text_search`.execute(db);
}
