// String forms the original Python/Flask/Jinja stack produces and that show up verbatim in pages,
// URLs and observations: repr() of dicts and lists, json.dumps, markupsafe escaping, werkzeug quoting.
import { comparePythonStrings, pythonFloatRepr, pythonStrRepr } from '../catalog/index.js';

function hex(codeUnit: number, width: number): string {
  return codeUnit.toString(16).padStart(width, '0');
}

/** Python `str(dict)` for a dict of strings, in insertion order. */
export function pythonDictRepr(entries: Iterable<readonly [string, string]>): string {
  const parts: string[] = [];
  for (const [key, value] of entries) parts.push(`${pythonStrRepr(key)}: ${pythonStrRepr(value)}`);
  return `{${parts.join(', ')}}`;
}

/** Python `str(list)` for a list of strings. */
export function pythonListRepr(values: readonly string[]): string {
  return `[${values.map(pythonStrRepr).join(', ')}]`;
}

function jsonStringLiteral(value: string): string {
  let out = '"';
  for (let i = 0; i < value.length; i++) {
    const code = value.charCodeAt(i);
    const ch = value[i] ?? '';
    if (ch === '"') out += '\\"';
    else if (ch === '\\') out += '\\\\';
    else if (ch === '\n') out += '\\n';
    else if (ch === '\r') out += '\\r';
    else if (ch === '\t') out += '\\t';
    else if (ch === '\b') out += '\\b';
    else if (ch === '\f') out += '\\f';
    // ensure_ascii: everything outside printable ASCII becomes \uXXXX (UTF-16 units, lowercase hex)
    else if (code < 0x20 || code > 0x7e) out += `\\u${hex(code, 4)}`;
    else out += ch;
  }
  return out + '"';
}

/** Python `json.dumps` (default separators, ensure_ascii) of a flat dict of strings or nulls. */
export function pythonJsonDumpsDict(
  entries: Iterable<readonly [string, string | null]>,
  options: { readonly sortKeys: boolean },
): string {
  const list = [...entries];
  if (options.sortKeys) list.sort(([a], [b]) => comparePythonStrings(a, b));
  const parts = list.map(
    ([key, value]) =>
      `${jsonStringLiteral(key)}: ${value === null ? 'null' : jsonStringLiteral(value)}`,
  );
  return `{${parts.join(', ')}}`;
}

/** Flask's `tojson` filter on a flat dict: sorted keys, then the HTML-safe replacements. */
export function flaskToJsonDict(entries: Iterable<readonly [string, string | null]>): string {
  return pythonJsonDumpsDict(entries, { sortKeys: true })
    .replaceAll('<', '\\u003c')
    .replaceAll('>', '\\u003e')
    .replaceAll('&', '\\u0026')
    .replaceAll("'", '\\u0027');
}

/** markupsafe `escape`, as Jinja autoescaping applies it to every `{{ }}`. */
export function escapeHtml(value: string): string {
  return value
    .replaceAll('&', '&amp;')
    .replaceAll('>', '&gt;')
    .replaceAll('<', '&lt;')
    .replaceAll("'", '&#39;')
    .replaceAll('"', '&#34;');
}

/** Jinja's rendering of a value that may be Python `None`. */
export function jinjaText(value: string | null): string {
  return value === null ? 'None' : value;
}

const UTF8 = new TextEncoder();
const PERCENT_BYTE = Array.from(
  { length: 256 },
  (_, byte) => `%${byte.toString(16).toUpperCase().padStart(2, '0')}`,
);

function asciiTable(isSafe: (byte: number) => boolean): Uint8Array {
  return Uint8Array.from({ length: 128 }, (_, byte) => (isSafe(byte) ? 1 : 0));
}

/**
 * Percent-encodes the UTF-8 bytes of `value` that are not safe. Runs of safe ASCII are copied as
 * they are; only from the first non-ASCII character on is the rest encoded to bytes.
 */
function percentEncode(value: string, safeAscii: Uint8Array, spaceAsPlus: boolean): string {
  let out = '';
  let copiedTo = 0;
  for (let i = 0; i < value.length; i++) {
    const code = value.charCodeAt(i);
    if (code >= 0x80) {
      out += value.slice(copiedTo, i);
      for (const byte of UTF8.encode(value.slice(i))) {
        if (byte < 0x80 && safeAscii[byte] === 1) out += String.fromCharCode(byte);
        else if (spaceAsPlus && byte === 0x20) out += '+';
        else out += PERCENT_BYTE[byte];
      }
      return out;
    }
    if (safeAscii[code] === 1) continue;
    out += value.slice(copiedTo, i) + (spaceAsPlus && code === 0x20 ? '+' : PERCENT_BYTE[code]);
    copiedTo = i + 1;
  }
  return copiedTo === 0 ? value : out + value.slice(copiedTo);
}

function isUnreserved(byte: number): boolean {
  return (
    (byte >= 0x30 && byte <= 0x39) ||
    (byte >= 0x41 && byte <= 0x5a) ||
    (byte >= 0x61 && byte <= 0x7a) ||
    byte === 0x2d || // -
    byte === 0x2e || // .
    byte === 0x5f || // _
    byte === 0x7e // ~
  );
}

const QUERY_EXTRA_SAFE = new Set(Array.from("$!'()*,;", (ch) => ch.charCodeAt(0)));
const QUERY_SAFE = asciiTable((byte) => isUnreserved(byte) || QUERY_EXTRA_SAFE.has(byte));
const PATH_SEGMENT_SAFE = asciiTable((byte) => isUnreserved(byte) || byte === 0x3a);

/** werkzeug `url_quote_plus`, used by `url_for` for query arguments. */
export function werkzeugQuotePlus(value: string): string {
  return percentEncode(value, QUERY_SAFE, true);
}

/** Quoting of one path segment as the original site's links show it (`:` kept, `'`, `,` and `/` encoded). */
export function quotePathSegment(value: string): string {
  return percentEncode(value, PATH_SEGMENT_SAFE, false);
}

/** Python slicing `list[start:stop]` for a step of 1, negative indices included. */
export function pythonSlice<T>(list: readonly T[], start: number, stop: number): T[] {
  const clamp = (index: number): number => {
    const resolved = index < 0 ? list.length + index : index;
    return Math.min(Math.max(resolved, 0), list.length);
  };
  return list.slice(clamp(start), Math.max(clamp(start), clamp(stop)));
}

/**
 * Python `str(x)` of a JSON-like value (`None`, `True`, `['a']`, `{'k': 'v'}`). JS cannot tell `1`
 * from `1.0`, so integral numbers print as ints.
 */
export function pythonValueRepr(value: unknown): string {
  if (value === null || value === undefined) return 'None';
  if (typeof value === 'string') return pythonStrRepr(value);
  if (typeof value === 'boolean') return value ? 'True' : 'False';
  if (typeof value === 'number')
    return Number.isInteger(value) ? String(value) : pythonFloatRepr(value);
  if (Array.isArray(value)) return `[${value.map(pythonValueRepr).join(', ')}]`;
  if (value instanceof Map) {
    return `{${[...value].map(([k, v]) => `${pythonValueRepr(k)}: ${pythonValueRepr(v)}`).join(', ')}}`;
  }
  if (typeof value === 'object') {
    return `{${Object.entries(value)
      .map(([k, v]) => `${pythonStrRepr(k)}: ${pythonValueRepr(v)}`)
      .join(', ')}}`;
  }
  return String(value);
}
