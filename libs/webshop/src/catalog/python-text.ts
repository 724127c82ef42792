// CPython string semantics that WebShop's behaviour depends on and that JavaScript spells differently.

// Code points for which CPython's str.isspace() is true (what str.strip() and str.split() use).
const PYTHON_WHITESPACE = new Set<number>([
  0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x1c, 0x1d, 0x1e, 0x1f, 0x20, 0x85, 0xa0, 0x1680, 0x2000, 0x2001,
  0x2002, 0x2003, 0x2004, 0x2005, 0x2006, 0x2007, 0x2008, 0x2009, 0x200a, 0x2028, 0x2029, 0x202f,
  0x205f, 0x3000,
]);

/** Python `s.strip()` (no argument) or `s.strip(chars)`. */
export function pythonStrip(s: string, chars?: string): string {
  // Most text has nothing to strip: every whitespace character is one UTF-16 unit, so the ends tell.
  if (
    chars === undefined &&
    (s === '' ||
      (!PYTHON_WHITESPACE.has(s.charCodeAt(0)) &&
        !PYTHON_WHITESPACE.has(s.charCodeAt(s.length - 1))))
  )
    return s;
  const points = Array.from(s);
  const strippable = chars === undefined ? null : new Set(Array.from(chars));
  const isStrippable = (ch: string): boolean =>
    strippable === null ? PYTHON_WHITESPACE.has(ch.codePointAt(0) ?? -1) : strippable.has(ch);
  let start = 0;
  let end = points.length;
  while (start < end && isStrippable(points[start] ?? '')) start += 1;
  while (end > start && isStrippable(points[end - 1] ?? '')) end -= 1;
  return points.slice(start, end).join('');
}

/** Python `s.split()` without a separator: split on runs of whitespace, no empty parts. */
export function pythonSplitWhitespace(s: string): string[] {
  const parts: string[] = [];
  let current = '';
  for (const ch of s) {
    if (PYTHON_WHITESPACE.has(ch.codePointAt(0) ?? -1)) {
      if (current !== '') parts.push(current);
      current = '';
    } else {
      current += ch;
    }
  }
  if (current !== '') parts.push(current);
  return parts;
}

/** Python's default string order (by code point), unlike JS's UTF-16 code unit order. */
export function comparePythonStrings(a: string, b: string): number {
  const shorter = Math.min(a.length, b.length);
  for (let i = 0; i < shorter; i += 1) {
    const unitA = a.charCodeAt(i);
    const unitB = b.charCodeAt(i);
    if (unitA !== unitB) {
      return (a.codePointAt(i) ?? 0) - (b.codePointAt(i) ?? 0);
    }
  }
  return a.length - b.length;
}

/** Python `sorted(strings)`. */
export function sortedPythonStrings(strings: Iterable<string>): string[] {
  return Array.from(strings).sort(comparePythonStrings);
}

/** Python `len(s)`: the number of code points. */
export function pythonLength(s: string): number {
  return Array.from(s).length;
}

const NOT_PRINTABLE = /[\p{C}\p{Z}]/u;

function escapeCodePoint(codePoint: number): string {
  if (codePoint < 0x100) return `\\x${codePoint.toString(16).padStart(2, '0')}`;
  if (codePoint < 0x10000) return `\\u${codePoint.toString(16).padStart(4, '0')}`;
  return `\\U${codePoint.toString(16).padStart(8, '0')}`;
}

/** Python `repr(s)` for a str. */
export function pythonStrRepr(s: string): string {
  const quote = s.includes("'") && !s.includes('"') ? '"' : "'";
  let body = '';
  for (const ch of s) {
    const codePoint = ch.codePointAt(0) ?? 0;
    if (ch === quote || ch === '\\') body += `\\${ch}`;
    else if (ch === '\t') body += '\\t';
    else if (ch === '\n') body += '\\n';
    else if (ch === '\r') body += '\\r';
    else if (ch !== ' ' && NOT_PRINTABLE.test(ch)) body += escapeCodePoint(codePoint);
    else body += ch;
  }
  return `${quote}${body}${quote}`;
}

/** Python `str(t)` for a tuple of strings, e.g. `('size', 'XL')`. */
export function pythonTupleRepr(items: readonly string[]): string {
  if (items.length === 1) return `(${pythonStrRepr(items[0] ?? '')},)`;
  return `(${items.map(pythonStrRepr).join(', ')})`;
}

/** Python `repr(x)` / `str(x)` for a float: shortest round-trip digits, e.g. `877.8`, `1299.0`, `1e-05`. */
export function pythonFloatRepr(x: number): string {
  if (Number.isNaN(x)) return 'nan';
  if (x === Infinity) return 'inf';
  if (x === -Infinity) return '-inf';
  if (x === 0) return Object.is(x, -0) ? '-0.0' : '0.0';
  const sign = x < 0 ? '-' : '';
  const [mantissa = '', exponentText = '0'] = Math.abs(x).toExponential().split('e');
  const exponent = Number(exponentText);
  const digits = mantissa.replace('.', '');
  if (exponent >= -4 && exponent < 16) {
    if (exponent < 0) return `${sign}0.${'0'.repeat(-exponent - 1)}${digits}`;
    const integerPart = digits.slice(0, exponent + 1).padEnd(exponent + 1, '0');
    const fractionPart = digits.slice(exponent + 1);
    return `${sign}${integerPart}.${fractionPart === '' ? '0' : fractionPart}`;
  }
  const exponentSign = exponent < 0 ? '-' : '+';
  const exponentDigits = String(Math.abs(exponent)).padStart(2, '0');
  return `${sign}${mantissa}e${exponentSign}${exponentDigits}`;
}

/** Python `round(x)` on a float: to the nearest integer, ties to even. */
export function pythonRound(x: number): number {
  const floor = Math.floor(x);
  const diff = x - floor;
  if (diff > 0.5) return floor + 1;
  if (diff < 0.5) return floor;
  return floor % 2 === 0 ? floor : floor + 1;
}
