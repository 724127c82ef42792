// Python's rules where OSWorld's code leans on them: truthiness of JSON values, `str.split()`, repr.

/** Python's `bool(x)` of a JSON value: `"false"` is true, `0`, `""`, `[]`, `{}` and `None` are false. */
export function pythonTruthy(value: unknown): boolean {
  if (value === null || value === undefined || value === false) return false;
  if (typeof value === 'number') return value !== 0;
  if (typeof value === 'string') return value.length > 0;
  if (Array.isArray(value)) return value.length > 0;
  if (typeof value === 'object') return Object.keys(value).length > 0;
  return true;
}

/** Python's `str.split()` without arguments: runs of whitespace separate, ends are dropped. */
export function pythonSplit(text: string): string[] {
  return text.split(/[\s\u001c-\u001f\u0085]+/u).filter((part) => part.length > 0);
}

/** Python's `repr` of a JSON value, close enough for error messages (`'a'`, `None`, `[1, 'b']`). */
export function pythonRepr(value: unknown): string {
  if (value === null || value === undefined) return 'None';
  if (value === true) return 'True';
  if (value === false) return 'False';
  if (typeof value === 'string') return `'${value.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
  if (typeof value === 'number') return String(value);
  if (Array.isArray(value)) return `[${value.map(pythonRepr).join(', ')}]`;
  if (typeof value === 'object')
    return `{${Object.entries(value)
      .map(([key, entry]) => `${pythonRepr(key)}: ${pythonRepr(entry)}`)
      .join(', ')}}`;
  return String(value);
}

/** The Python type name of a JSON value, as Python error messages print it. */
export function pythonTypeName(value: unknown): string {
  if (value === null || value === undefined) return 'NoneType';
  if (typeof value === 'boolean') return 'bool';
  if (typeof value === 'number') return Number.isInteger(value) ? 'int' : 'float';
  if (typeof value === 'string') return 'str';
  if (Array.isArray(value)) return 'list';
  if (typeof value === 'function') return 'function';
  return 'dict';
}
