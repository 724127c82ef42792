import { createHash } from 'node:crypto';

/**
 * JSON with every object's keys sorted (by UTF-16 code units) and no spaces: the same text for
 * the same value, whatever order Postgres or a writer kept. Numbers as JavaScript writes them.
 */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  const entries = Object.entries(value as Record<string, unknown>)
    .filter(([, item]) => item !== undefined)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return `{${entries.map(([key, item]) => `${JSON.stringify(key)}:${canonicalJson(item)}`).join(',')}}`;
}

/** The configuration digest of a run: sha256 (hex) of the canonical JSON of `runs.config`. */
export function configDigest(config: unknown): string {
  return createHash('sha256').update(canonicalJson(config)).digest('hex');
}
