import type { Command } from 'commander';
import type { Database } from '@benchfleet/db';

// A benchmark's tools (`scheduler <benchmark> …`): types only, so a module that imports them stays
// light and `scheduler --help` names every tool without loading a benchmark.

/** What the scheduler gives a benchmark's tools. */
export interface ToolContext {
  /** Runs `body` with a pool on DATABASE_URL whose schema is current, and always releases it. */
  withDatabase<T>(body: (db: Database) => Promise<T>): Promise<T>;
  /** Checks DATABASE_URL (set, Postgres answers, the database exists) before long work that ends in it. */
  checkDatabase(): Promise<void>;
}

/** A benchmark's tools, mounted by the scheduler as `scheduler <benchmark> <tool>`. */
export interface BenchmarkTools {
  /** What they are, for `scheduler --help`. */
  readonly description: string;
  /** Their subcommands (options and actions), loaded only when one of them runs or is asked for help. */
  load(): Promise<(command: Command, context: ToolContext) => void>;
}
