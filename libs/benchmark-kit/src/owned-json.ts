import { z } from 'zod';
import { PermanentError } from '@benchfleet/core';

/**
 * Reads a jsonb value through the schema that owns it. A value its own schema refuses was written
 * by something else (or by an older build): retrying cannot fix it.
 */
export function parseOwned<T>(schema: z.ZodType<T>, value: unknown, what: string): T {
  const parsed = schema.safeParse(value);
  if (!parsed.success)
    throw new PermanentError(
      `${what} is malformed: ${z.prettifyError(parsed.error).replace(/\n/g, '; ')}`,
    );
  return parsed.data;
}
