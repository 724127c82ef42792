// Python's json.loads: what it accepts beyond JSON.parse (NaN, Infinity), what it refuses (a BOM,
// raw control characters in strings), insertion-ordered dicts and its JSONDecodeError messages.
import { PyDict, type PyValue } from './values.js';
import { PythonException } from './exceptions.js';

const whitespace = new Set([' ', '\t', '\n', '\r']);
const numberPattern = /-?(?:0|[1-9][0-9]*)(\.[0-9]+)?([eE][-+]?[0-9]+)?/y;
const escapes: Readonly<Record<string, string>> = {
  '"': '"',
  '\\': '\\',
  '/': '/',
  b: '\b',
  f: '\f',
  n: '\n',
  r: '\r',
  t: '\t',
};

/** The JSONDecodeError Python raises, with its "msg: line L column C (char P)" message. */
function decodeError(message: string, text: string, position: number): PythonException {
  const before = text.slice(0, position);
  const lineStart = before.lastIndexOf('\n') + 1;
  const line = before.split('\n').length;
  // Python counts positions in code points.
  const char = [...before].length;
  const column = [...before.slice(lineStart)].length + 1;
  return new PythonException(
    'JSONDecodeError',
    `${message}: line ${line} column ${column} (char ${char})`,
  );
}

/** Thrown inside the scanner where Python raises StopIteration (no value at `position`). */
class NoValue {
  constructor(readonly position: number) {}
}

class Scanner {
  constructor(private readonly text: string) {}

  skipWhitespace(position: number): number {
    while (position < this.text.length && whitespace.has(this.text[position] as string)) {
      position++;
    }
    return position;
  }

  scanOnce(position: number): [PyValue, number] {
    const text = this.text;
    if (position >= text.length) throw new NoValue(position);
    const char = text[position];
    if (char === '"') return this.scanString(position + 1);
    if (char === '{') return this.scanObject(position + 1);
    if (char === '[') return this.scanArray(position + 1);
    if (text.startsWith('null', position)) return [null, position + 4];
    if (text.startsWith('true', position)) return [true, position + 4];
    if (text.startsWith('false', position)) return [false, position + 5];
    numberPattern.lastIndex = position;
    const number = numberPattern.exec(text);
    if (number) {
      const literal = number[0];
      const end = position + literal.length;
      if (number[1] !== undefined || number[2] !== undefined) return [Number(literal), end];
      const value = Number(literal);
      return [Number.isSafeInteger(value) ? value || 0 : BigInt(literal), end];
    }
    if (text.startsWith('NaN', position)) return [Number.NaN, position + 3];
    if (text.startsWith('Infinity', position)) return [Infinity, position + 8];
    if (text.startsWith('-Infinity', position)) return [-Infinity, position + 9];
    throw new NoValue(position);
  }

  private scanString(position: number): [string, number] {
    const text = this.text;
    const begin = position - 1;
    let out = '';
    for (;;) {
      if (position >= text.length) {
        throw decodeError('Unterminated string starting at', text, begin);
      }
      const char = text[position] as string;
      if (char === '"') return [out, position + 1];
      if (char.charCodeAt(0) < 0x20) {
        throw decodeError('Invalid control character at', text, position);
      }
      if (char !== '\\') {
        out += char;
        position++;
        continue;
      }
      const escape = text[position + 1];
      if (escape === undefined) throw decodeError('Unterminated string starting at', text, begin);
      if (escape !== 'u') {
        const mapped = escapes[escape];
        if (mapped === undefined) throw decodeError('Invalid \\escape', text, position);
        out += mapped;
        position += 2;
        continue;
      }
      const hex = text.slice(position + 2, position + 6);
      if (!/^[0-9a-fA-F]{4}$/.test(hex)) {
        throw decodeError('Invalid \\uXXXX escape', text, position + 1);
      }
      // A surrogate pair written as two escapes is one code point in Python; JS keeps the same units.
      out += String.fromCharCode(parseInt(hex, 16));
      position += 6;
    }
  }

  private scanObject(position: number): [PyDict, number] {
    const text = this.text;
    const dict = new PyDict();
    position = this.skipWhitespace(position);
    if (text[position] === '}') return [dict, position + 1];
    if (text[position] !== '"') {
      throw decodeError('Expecting property name enclosed in double quotes', text, position);
    }
    position++;
    for (;;) {
      const [key, afterKey] = this.scanString(position);
      position = this.skipWhitespace(afterKey);
      if (text[position] !== ':') throw decodeError("Expecting ':' delimiter", text, position);
      position = this.skipWhitespace(position + 1);
      const [value, afterValue] = this.valueAt(position);
      dict.set(key, value);
      position = this.skipWhitespace(afterValue);
      const next = text[position];
      position++;
      if (next === '}') return [dict, position];
      if (next !== ',') throw decodeError("Expecting ',' delimiter", text, position - 1);
      position = this.skipWhitespace(position);
      if (text[position] !== '"') {
        throw decodeError('Expecting property name enclosed in double quotes', text, position);
      }
      position++;
    }
  }

  private scanArray(position: number): [PyValue[], number] {
    const text = this.text;
    const list: PyValue[] = [];
    position = this.skipWhitespace(position);
    if (text[position] === ']') return [list, position + 1];
    for (;;) {
      const [value, afterValue] = this.valueAt(position);
      list.push(value);
      position = this.skipWhitespace(afterValue);
      const next = text[position];
      position++;
      if (next === ']') return [list, position];
      if (next !== ',') throw decodeError("Expecting ',' delimiter", text, position - 1);
      position = this.skipWhitespace(position);
    }
  }

  /** scan_once inside a container: a missing value is "Expecting value" at that spot. */
  valueAt(position: number): [PyValue, number] {
    try {
      return this.scanOnce(position);
    } catch (error) {
      if (error instanceof NoValue) throw decodeError('Expecting value', this.text, error.position);
      throw error;
    }
  }
}

/** Python's `json.loads(text)` (strict mode, the default). */
export function pyJsonLoads(text: string): PyValue {
  if (text.startsWith('\ufeff')) {
    throw decodeError('Unexpected UTF-8 BOM (decode using utf-8-sig)', text, 0);
  }
  const scanner = new Scanner(text);
  const [value, end] = scanner.valueAt(scanner.skipWhitespace(0));
  const rest = scanner.skipWhitespace(end);
  if (rest !== text.length) throw decodeError('Extra data', text, rest);
  return value;
}
