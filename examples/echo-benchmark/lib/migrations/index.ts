import type { Migration } from 'kysely';
import * as echoAnswers from './20261208100000_echo_answers.js';

// The echo benchmark's tables, merged with the core migrations by the registry (its descriptor's
// `migrations`). Listed by hand so the migrator needs no file-system scan; a test checks every
// file is listed.
export const echoMigrations: Record<string, Migration> = {
  '20261208100000_echo_answers': echoAnswers,
};
