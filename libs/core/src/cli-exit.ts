import { z } from 'zod';
import { ConfigError } from './config.js';
import { UsageError, errorMessage } from './errors.js';
import { redactSecrets } from './logger.js';

/** Exit codes: 2 for what the user must fix in the command or configuration, 1 for the rest. */
export function exitCodeFor(error: unknown): number {
  return error instanceof UsageError || error instanceof ConfigError ? 2 : 1;
}

/** A Postgres server error as node-postgres reports it (a five-character SQLSTATE). */
function isPostgresError(error: unknown): error is Error & { code: string } {
  if (!(error instanceof Error) || !('severity' in error)) return false;
  const code: unknown = (error as { code?: unknown }).code;
  return typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code);
}

/** The message of any error as one line: no driver dump, no schema JSON, no stack. */
export function oneLineMessage(error: unknown): string {
  let message: string;
  if (error instanceof z.ZodError) message = `invalid data: ${z.prettifyError(error)}`;
  else if (isPostgresError(error))
    message = `Postgres refused the request (SQLSTATE ${error.code}): ${error.message}`;
  else message = errorMessage(error);
  return redactSecrets(
    message
      .replace(/\s*\n\s*(✖\s*)?/g, '; ')
      .replace(/^(✖\s*)/, '')
      .trim(),
  );
}

/**
 * Prints one line naming the problem (no stack trace) and exits non-zero. Set
 * BENCHFLEET_DEBUG=1 for the stack.
 */
export function failAndExit(program: string, error: unknown, debug = false): never {
  process.stderr.write(`${program}: ${oneLineMessage(error)}\n`);
  if (debug && error instanceof Error && error.stack)
    process.stderr.write(`${redactSecrets(error.stack)}\n`);
  process.exit(exitCodeFor(error));
}
