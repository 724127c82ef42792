import { isDeepStrictEqual } from 'node:util';
import type { ConfigDifference } from '../shared/view-rows.js';

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

const jsonText = (value: unknown) => JSON.stringify(value) ?? 'null';

/**
 * What changed from `a` to `b`, key by key into nested objects (paths like `config.llm.model`);
 * arrays and scalars are compared as whole values. Sorted by path.
 */
export function configDifference(a: unknown, b: unknown, path = ''): ConfigDifference[] {
  if (isPlainObject(a) && isPlainObject(b)) {
    const keys = [...new Set([...Object.keys(a), ...Object.keys(b)])].sort();
    return keys.flatMap((key) => {
      const at = path ? `${path}.${key}` : key;
      if (!(key in b)) return [{ path: at, change: 'removed' as const, a: jsonText(a[key]) }];
      if (!(key in a)) return [{ path: at, change: 'added' as const, b: jsonText(b[key]) }];
      return configDifference(a[key], b[key], at);
    });
  }
  return isDeepStrictEqual(a, b)
    ? []
    : [{ path: path || '(value)', change: 'changed', a: jsonText(a), b: jsonText(b) }];
}
