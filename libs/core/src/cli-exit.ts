import { ConfigError } from './config.js';
import { UsageError, errorMessage } from './errors.js';
import { redactSecrets } from './logger.js';

/** Exit codes: 2 for what the user must fix in the command or configuration, 1 for the rest. */
export function exitCodeFor(error: unknown): number {
  return error instanceof UsageError || error instanceof ConfigError ? 2 : 1;
}

/**
 * Prints one line naming the problem (no stack trace) and exits non-zero. Set
 * BENCHFLEET_DEBUG=1 for the stack.
 */
export function failAndExit(program: string, error: unknown, debug = false): never {
  const message = redactSecrets(errorMessage(error));
  process.stderr.write(`${program}: ${message}\n`);
  if (debug && error instanceof Error && error.stack) process.stderr.write(`${redactSecrets(error.stack)}\n`);
  process.exit(exitCodeFor(error));
}
