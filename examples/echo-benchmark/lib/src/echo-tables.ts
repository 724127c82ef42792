import type { Generated, Insertable, Kysely } from 'kysely';
import type { DB, Timestamp } from '@benchfleet/db';

// The echo benchmark's own table (its migration: ../migrations), beside the shared ones. A test
// holds these types to the migrated schema (libs/testing/src/table-types.test.ts).

interface EchoAnswersTable {
  run_id: string;
  task_id: string;
  attempt: number;
  answer: string;
  steps: number;
  answered_at: Generated<Timestamp>;
}

/** Echo's tables, as `db.withTables<EchoTables>()` adds them to the shared ones. */
// A type, not an interface: Kysely's withTables wants an index-signature-compatible record.
export type EchoTables = {
  echo_answers: EchoAnswersTable;
};

export type NewEchoAnswer = Insertable<EchoAnswersTable>;
export type EchoDatabase = Kysely<DB & EchoTables>;
