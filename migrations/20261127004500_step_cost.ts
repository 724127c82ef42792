import type { Kysely } from 'kysely';

// Frozen once released: later schema changes go into a new migration file.
//
// What a step's LLM calls cost, in USD: a WebShop agent's call, or the calls an OSWorld worker's
// relay forwarded for the step's ASSISTANT message. Null: not known (no call went through the
// fleet, or the model has no price) — never a silent 0.

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('steps').addColumn('cost_usd', 'float8').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('steps').dropColumn('cost_usd').execute();
}
