import { ERROR_TYPE_OTHER } from './span-attributes.js';

/**
 * `error.type` for a thrown error: its class (`BudgetExceededError`, `AbortError`), low-cardinality
 * as the conventions ask; never its message, which may carry ids or secrets.
 */
export function errorTypeOf(error: unknown): string {
  if (!(error instanceof Error)) return ERROR_TYPE_OTHER;
  if (error.name !== '' && error.name !== 'Error') return error.name;
  return error.constructor.name !== 'Error' ? error.constructor.name : ERROR_TYPE_OTHER;
}
