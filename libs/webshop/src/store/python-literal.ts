// The subset of Python's `ast.literal_eval` the site's routes need: the keywords list and the
// options dict arrive in URLs as Python `str()` forms (or JSON, which is mostly valid Python).

export type PythonLiteral =
  | string
  | number
  | boolean
  | null
  | readonly PythonLiteral[]
  | ReadonlyMap<string | number | boolean | null, PythonLiteral>;

export class PythonLiteralError extends Error {
  override readonly name = 'PythonLiteralError';
}

const SIMPLE_ESCAPES: Readonly<Record<string, string>> = {
  '\\': '\\',
  "'": "'",
  '"': '"',
  a: '\x07',
  b: '\b',
  f: '\f',
  n: '\n',
  r: '\r',
  t: '\t',
  v: '\v',
  '\n': '',
};

class LiteralReader {
  private position = 0;
  constructor(private readonly text: string) {}

  readDocument(): PythonLiteral {
    const value = this.readValue();
    this.skipSpace();
    if (this.position !== this.text.length) this.fail('unexpected text after the value');
    return value;
  }

  private fail(message: string): never {
    throw new PythonLiteralError(
      `${message} at offset ${this.position} of ${JSON.stringify(this.text)}`,
    );
  }

  private skipSpace(): void {
    while (
      this.position < this.text.length &&
      ' \t\n\r\f\v'.includes(this.text[this.position] ?? '')
    )
      this.position++;
  }

  private peek(): string {
    this.skipSpace();
    return this.text[this.position] ?? '';
  }

  private expect(ch: string): void {
    if (this.peek() !== ch) this.fail(`expected ${JSON.stringify(ch)}`);
    this.position++;
  }

  private readValue(): PythonLiteral {
    const ch = this.peek();
    if (ch === '[') return this.readSequence('[', ']');
    if (ch === '(') return this.readSequence('(', ')');
    if (ch === '{') return this.readDict();
    if (ch === "'" || ch === '"') return this.readStrings();
    if (/[uU]/.test(ch) && /['"]/.test(this.text[this.position + 1] ?? '')) {
      this.position++;
      return this.readStrings();
    }
    const word = /^(?:True|False|None)\b/.exec(this.text.slice(this.position));
    if (word !== null) {
      this.position += word[0].length;
      return word[0] === 'None' ? null : word[0] === 'True';
    }
    const number = /^[+-]?(?:\d[\d_]*\.?[\d_]*(?:[eE][+-]?\d+)?|\.\d[\d_]*(?:[eE][+-]?\d+)?)/.exec(
      this.text.slice(this.position),
    );
    if (number !== null) {
      this.position += number[0].length;
      return Number(number[0].replaceAll('_', ''));
    }
    return this.fail('expected a literal');
  }

  private readSequence(open: string, close: string): PythonLiteral[] {
    this.expect(open);
    const items: PythonLiteral[] = [];
    while (this.peek() !== close) {
      items.push(this.readValue());
      if (this.peek() !== ',') break;
      this.position++;
    }
    this.expect(close);
    return items;
  }

  private readDict(): Map<string | number | boolean | null, PythonLiteral> {
    this.expect('{');
    const entries = new Map<string | number | boolean | null, PythonLiteral>();
    while (this.peek() !== '}') {
      const key = this.readValue();
      if (typeof key === 'object' && key !== null) this.fail('unhashable dict key');
      this.expect(':');
      entries.set(key, this.readValue());
      if (this.peek() !== ',') break;
      this.position++;
    }
    this.expect('}');
    return entries;
  }

  /** One or more adjacent string literals, concatenated as Python does. */
  private readStrings(): string {
    let value = this.readString();
    while (/^['"]/.test(this.peek())) value += this.readString();
    return value;
  }

  private readString(): string {
    const quote = this.text[this.position] ?? '';
    const triple = this.text.startsWith(quote.repeat(3), this.position);
    const terminator = triple ? quote.repeat(3) : quote;
    this.position += terminator.length;
    let value = '';
    while (!this.text.startsWith(terminator, this.position)) {
      const ch = this.text[this.position];
      if (ch === undefined || (!triple && ch === '\n')) this.fail('unterminated string');
      this.position++;
      if (ch !== '\\') {
        value += ch;
        continue;
      }
      value += this.readEscape();
    }
    this.position += terminator.length;
    return value;
  }

  private readEscape(): string {
    const ch = this.text[this.position] ?? '';
    const simple = SIMPLE_ESCAPES[ch];
    if (simple !== undefined) {
      this.position++;
      return simple;
    }
    const hexLength = ch === 'x' ? 2 : ch === 'u' ? 4 : ch === 'U' ? 8 : 0;
    if (hexLength > 0) {
      const digits = this.text.slice(this.position + 1, this.position + 1 + hexLength);
      if (!new RegExp(`^[0-9a-fA-F]{${hexLength}}$`).test(digits)) this.fail('bad escape');
      this.position += 1 + hexLength;
      const codePoint = Number.parseInt(digits, 16);
      if (codePoint > 0x10ffff) this.fail('bad escape');
      // \uD83D alone stays a lone surrogate, as in Python
      return hexLength === 4 ? String.fromCharCode(codePoint) : String.fromCodePoint(codePoint);
    }
    const octal = /^[0-7]{1,3}/.exec(this.text.slice(this.position));
    if (octal !== null) {
      this.position += octal[0].length;
      return String.fromCharCode(Number.parseInt(octal[0], 8));
    }
    // Python keeps unknown escapes verbatim, backslash included.
    return '\\';
  }
}

export function parsePythonLiteral(text: string): PythonLiteral {
  return new LiteralReader(text).readDocument();
}
