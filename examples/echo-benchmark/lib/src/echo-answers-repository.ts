import type { Database } from '@benchfleet/db';
import type { EchoDatabase, EchoTables, NewEchoAnswer } from './echo-tables.js';

/** `echo_answers`: what each attempt of an echo task answered. */
export class EchoAnswersRepository {
  private readonly db: EchoDatabase;

  constructor(pool: Database) {
    this.db = pool.withTables<EchoTables>();
  }

  /**
   * Keyed by attempt: the first write of an attempt stays, and a second run of the same attempt
   * (a job redelivered) changes nothing; a retry is a new attempt, with its own row.
   */
  async record(answer: NewEchoAnswer): Promise<void> {
    await this.db
      .insertInto('echo_answers')
      .values(answer)
      .onConflict((conflict) => conflict.columns(['run_id', 'task_id', 'attempt']).doNothing())
      .execute();
  }
}
