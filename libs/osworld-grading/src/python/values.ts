// Python values in the ports. `PyValue` is data a port reads (what json.loads, yaml.safe_load or a
// getter gives); `PythonValue` is what a metric returns, its Python type kept (1, 1.0 and True differ).
import { PythonException } from './exceptions.js';

/**
 * A value of a Python type the metrics meet. `number` is int or float (JSON does not keep the
 * difference and Python's comparisons ignore it), `bigint` an int too large for a double.
 */
export type PyValue = null | boolean | number | bigint | string | PyValue[] | PyDict | PyOpaque;

/** A Python value the ports never look into (a date from YAML, bytes): equal only to its twin. */
export class PyOpaque {
  constructor(
    readonly typeName: string,
    /** Stands for the value in equality, ordering and repr. */
    readonly key: string,
  ) {}
}

/** The key under which Python's dict would find `key` (1, 1.0 and True are one key). */
function hashKey(key: PyValue): string {
  if (key === null) return 'N';
  if (typeof key === 'string') return `s${key}`;
  if (typeof key === 'boolean') return `n${key ? 1 : 0}`;
  if (typeof key === 'bigint') return `n${key}`;
  if (typeof key === 'number') {
    return Number.isInteger(key) && Number.isSafeInteger(key) ? `n${key}` : `f${key}`;
  }
  if (key instanceof PyOpaque) return `o${key.typeName}:${key.key}`;
  throw new PythonException('TypeError', `unhashable type: '${pyTypeName(key)}'`);
}

/** A Python dict: insertion-ordered, keys compared as Python hashes them. */
export class PyDict {
  private readonly entries = new Map<string, [PyValue, PyValue]>();

  static fromEntries(entries: Iterable<readonly [PyValue, PyValue]>): PyDict {
    const dict = new PyDict();
    for (const [key, value] of entries) dict.set(key, value);
    return dict;
  }

  get size(): number {
    return this.entries.size;
  }

  has(key: PyValue): boolean {
    return this.entries.has(hashKey(key));
  }

  /** The value under `key`, or undefined when absent (never raises). */
  lookup(key: PyValue): PyValue | undefined {
    return this.entries.get(hashKey(key))?.[1];
  }

  /** Python `d[key] = value`: an existing key keeps its place and its original key object. */
  set(key: PyValue, value: PyValue): void {
    const hashed = hashKey(key);
    const existing = this.entries.get(hashed);
    this.entries.set(hashed, [existing ? existing[0] : key, value]);
  }

  keys(): PyValue[] {
    return [...this.entries.values()].map(([key]) => key);
  }

  items(): Array<[PyValue, PyValue]> {
    return [...this.entries.values()];
  }
}

/**
 * Converts a JSON-like JS value (a fixture argument, a task's `rules`) into a PyValue. Objects
 * become PyDicts in JS key order (JSON.parse has already moved integer-like keys first).
 */
export function toPy(value: unknown): PyValue {
  if (value === null || value === undefined) return null;
  if (
    typeof value === 'boolean' ||
    typeof value === 'number' ||
    typeof value === 'bigint' ||
    typeof value === 'string'
  ) {
    return value;
  }
  if (value instanceof PyDict || value instanceof PyOpaque) return value;
  if (Array.isArray(value)) return value.map(toPy);
  if (typeof value === 'object') {
    return PyDict.fromEntries(Object.entries(value).map(([key, item]) => [key, toPy(item)]));
  }
  throw new Error(`not a JSON-like value: ${typeof value}`);
}

/** Python's `type(value).__name__`. */
export function pyTypeName(value: PyValue): string {
  if (value === null) return 'NoneType';
  if (typeof value === 'boolean') return 'bool';
  if (typeof value === 'bigint') return 'int';
  if (typeof value === 'number') return Number.isInteger(value) ? 'int' : 'float';
  if (typeof value === 'string') return 'str';
  if (Array.isArray(value)) return 'list';
  if (value instanceof PyDict) return 'dict';
  return value.typeName;
}

/** Python's truthiness (`if not x`). */
export function pyTruthy(value: PyValue): boolean {
  if (value === null) return false;
  if (typeof value === 'boolean') return value;
  if (typeof value === 'number') return value !== 0;
  if (typeof value === 'bigint') return value !== 0n;
  if (typeof value === 'string') return value.length > 0;
  if (Array.isArray(value)) return value.length > 0;
  if (value instanceof PyDict) return value.size > 0;
  return true;
}

function reprString(value: string): string {
  const quote = value.includes("'") && !value.includes('"') ? '"' : "'";
  let out = quote;
  for (const char of value) {
    const code = char.codePointAt(0) ?? 0;
    if (char === quote || char === '\\') out += `\\${char}`;
    else if (char === '\n') out += '\\n';
    else if (char === '\r') out += '\\r';
    else if (char === '\t') out += '\\t';
    else if (code < 0x20 || code === 0x7f) out += `\\x${code.toString(16).padStart(2, '0')}`;
    else out += char;
  }
  return out + quote;
}

function reprFloat(value: number): string {
  if (Number.isNaN(value)) return 'nan';
  if (!Number.isFinite(value)) return value > 0 ? 'inf' : '-inf';
  if (Number.isInteger(value) && Math.abs(value) < 1e16) return `${value}.0`;
  return String(value).replace(/e([+-])(\d)$/, 'e$10$2');
}

/** Python's `repr(value)`, for exception messages (ints and floats told apart by integrality). */
export function pyRepr(value: PyValue): string {
  if (value === null) return 'None';
  if (typeof value === 'boolean') return value ? 'True' : 'False';
  if (typeof value === 'bigint') return String(value);
  if (typeof value === 'number') return Number.isInteger(value) ? String(value) : reprFloat(value);
  if (typeof value === 'string') return reprString(value);
  if (Array.isArray(value)) return `[${value.map(pyRepr).join(', ')}]`;
  if (value instanceof PyDict) {
    return `{${value
      .items()
      .map(([key, item]) => `${pyRepr(key)}: ${pyRepr(item)}`)
      .join(', ')}}`;
  }
  return value.key;
}

export type PythonValue =
  | { readonly type: 'float'; readonly value: number }
  | { readonly type: 'int'; readonly value: number }
  | { readonly type: 'bool'; readonly value: boolean }
  | { readonly type: 'NoneType'; readonly value: null }
  | { readonly type: 'str'; readonly value: string };

export const pyFloat = (value: number): PythonValue => ({ type: 'float', value });
export const pyInt = (value: number): PythonValue => ({ type: 'int', value: Math.trunc(value) });
export const pyBool = (value: boolean): PythonValue => ({ type: 'bool', value });
export const pyNone: PythonValue = { type: 'NoneType', value: null };
export const pyStr = (value: string): PythonValue => ({ type: 'str', value });
