import { randomBytes } from 'node:crypto';

/** Run ids sort by creation time and are safe in job ids, Redis keys and paths. */
export function newRunId(now = new Date()): string {
  const stamp = now
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d+Z$/, 'Z');
  return `run-${stamp}-${randomBytes(3).toString('hex')}`;
}

/** Keeps ids safe as BullMQ job ids (no `:`) and as path segments (no `/`, no `..`). */
export function sanitizeId(id: string): string {
  const safe = id
    .replace(/[^A-Za-z0-9_.-]/g, '_')
    .replace(/\.{2,}/g, '_')
    .replace(/^\./, '_');
  return safe || '_';
}
